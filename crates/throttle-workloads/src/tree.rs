//! A perfect binary tree of boxed nodes: the pointer-chasing fork-join shape
//! of chili's and spice's benchmark (one `join` per node).

/// One node of a perfect binary tree; the children are boxed, so a walk
/// chases pointers.
#[derive(Debug)]
pub struct Node {
    /// This node's value: its number in pre-order, counting from 1.
    pub value: u64,
    /// The left subtree, `None` at a leaf.
    pub left: Option<Box<Node>>,
    /// The right subtree, `None` at a leaf.
    pub right: Option<Box<Node>>,
}

impl Node {
    /// Builds a perfect tree with `depth` levels (`2^depth − 1` nodes; depth 0
    /// is treated as 1). Values are `1 ..= 2^depth − 1` in pre-order, so the
    /// sum is [`Node::expected_sum`].
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_workloads::tree::{sum_serial, Node};
    ///
    /// let tree = Node::tree(3);
    /// assert_eq!(sum_serial(&tree), 28); // 1 + 2 + ... + 7
    /// ```
    pub fn tree(depth: u32) -> Node {
        let mut next = 1;
        Node::build(depth.max(1), &mut next)
    }

    fn build(depth: u32, next: &mut u64) -> Node {
        let value = *next;
        *next += 1;
        let (left, right) = if depth > 1 {
            let left = Box::new(Node::build(depth - 1, next));
            let right = Box::new(Node::build(depth - 1, next));
            (Some(left), Some(right))
        } else {
            (None, None)
        };
        Node { value, left, right }
    }

    /// The sum of all values of a tree of `depth` levels, in closed form.
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_workloads::tree::Node;
    ///
    /// assert_eq!(Node::expected_sum(2), 6);
    /// ```
    pub fn expected_sum(depth: u32) -> u64 {
        let n = (1u128 << depth.clamp(1, 63)) - 1;
        (n * (n + 1) / 2) as u64
    }
}

/// Sums a tree's values recursively on the calling thread: the serial
/// baseline of the `tree_sum` benchmark.
///
/// # Examples
///
/// ```
/// use throttle_workloads::tree::{sum_serial, Node};
///
/// assert_eq!(sum_serial(&Node::tree(10)), Node::expected_sum(10));
/// ```
pub fn sum_serial(node: &Node) -> u64 {
    let left = node.left.as_deref().map_or(0, sum_serial);
    let right = node.right.as_deref().map_or(0, sum_serial);
    node.value + left + right
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_match_closed_form() {
        for depth in 1..=12 {
            assert_eq!(sum_serial(&Node::tree(depth)), Node::expected_sum(depth));
        }
        assert_eq!(Node::expected_sum(1), 1);
        assert_eq!(Node::expected_sum(3), 28);
    }
}

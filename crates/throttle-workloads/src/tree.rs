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

    /// Allocates the nodes breadth-first, so their heap addresses follow the levels of the tree.
    ///
    /// The order matters to the benchmark: a depth-first (post-order) build puts each right
    /// subtree just before its parent in memory, and a scheduler that runs the *second* half of a
    /// join first (chili does) then walks memory 3× faster than one that runs the first half first
    /// (serial code, rayon, throttle) — measured here: 13 ms vs 40 ms for the same serial sum at
    /// depth 23. A level-order layout is symmetric between the two walks, so the benchmark
    /// compares schedulers, not allocation luck. Values are numbered in the same level order.
    fn build(depth: u32, next: &mut u64) -> Node {
        let count = (1usize << depth) - 1;
        let mut nodes: Vec<Box<Node>> = Vec::with_capacity(count);
        for _ in 0..count {
            nodes.push(Box::new(Node {
                value: *next,
                left: None,
                right: None,
            }));
            *next += 1;
        }
        // In level order, node i's children are 2i+1 and 2i+2, so the last two nodes are the
        // children of the last internal node: pop them off and link bottom-up. Moving a `Box`
        // does not move its allocation, so the addresses keep the level order.
        for i in (0..count / 2).rev() {
            let right = nodes
                .pop()
                .expect("a perfect tree has two children per internal node");
            let left = nodes
                .pop()
                .expect("a perfect tree has two children per internal node");
            debug_assert_eq!(nodes.len(), 2 * i + 1);
            nodes[i].left = Some(left);
            nodes[i].right = Some(right);
        }
        *nodes.pop().expect("depth >= 1 gives a root")
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

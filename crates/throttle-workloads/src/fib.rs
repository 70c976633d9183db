//! Naive recursive Fibonacci: the smallest possible task per fork.

/// The `n`th Fibonacci number (`fib(0) = 0`, `fib(1) = 1`) by the naive
/// doubly recursive definition, on the calling thread: the serial baseline of
/// the `fib` benchmark. Exponential time on purpose.
///
/// # Examples
///
/// ```
/// use throttle_workloads::fib::fib_serial;
///
/// assert_eq!(fib_serial(20), 6765);
/// ```
pub fn fib_serial(n: u32) -> u64 {
    if n < 2 {
        u64::from(n)
    } else {
        fib_serial(n - 1) + fib_serial(n - 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let known = [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55];
        for (n, &f) in known.iter().enumerate() {
            assert_eq!(fib_serial(n as u32), f);
        }
        assert_eq!(fib_serial(25), 75_025);
    }
}

//! `try_for_each` and `try_reduce`: the fallible consumers, over `Result` and `Option`.

use std::ops::ControlFlow;

mod sealed {
    use std::ops::ControlFlow;
    use std::task::Poll;
    pub trait Sealed {}
    impl<T, E> Sealed for Result<T, E> {}
    impl<T> Sealed for Option<T> {}
    impl<B, C> Sealed for ControlFlow<B, C> {}
    impl<T, E> Sealed for Poll<Result<T, E>> {}
    impl<T, E> Sealed for Poll<Option<Result<T, E>>> {}
}

/// A type that is either a value to go on with or a reason to stop: `Result<T, E>` (stop on
/// `Err`), `Option<T>` (stop on `None`), `ControlFlow<B, C>` (stop on `Break`), and
/// `Poll<Result<T, E>>` and `Poll<Option<Result<T, E>>>` (stop on a ready `Err`). Stable
/// Rust's stand-in for the unstable `std::ops::Try`, as in rayon; implemented for those only
/// (sealed).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let r: Result<(), String> = (0..10u32).into_par_iter().try_for_each(|x| {
///     if x < 100 { Ok(()) } else { Err(format!("{x} is too big")) }
/// });
/// assert!(r.is_ok());
/// ```
pub trait Try: sealed::Sealed {
    /// The value to go on with (`T`).
    type Output;
    /// What a stop carries (`E` for `Result`, `()` for `Option`).
    type Residual;
    /// Go on with the output, or stop with the residual.
    fn branch(self) -> ControlFlow<Self::Residual, Self::Output>;
    /// Wraps a value to go on with (`Ok`, `Some`).
    fn from_output(output: Self::Output) -> Self;
    /// Wraps a reason to stop (`Err`, `None`).
    fn from_residual(residual: Self::Residual) -> Self;
}

impl<T, E> Try for Result<T, E> {
    type Output = T;
    type Residual = E;
    fn branch(self) -> ControlFlow<E, T> {
        match self {
            Ok(t) => ControlFlow::Continue(t),
            Err(e) => ControlFlow::Break(e),
        }
    }
    fn from_output(output: T) -> Self {
        Ok(output)
    }
    fn from_residual(residual: E) -> Self {
        Err(residual)
    }
}

impl<T> Try for Option<T> {
    type Output = T;
    type Residual = ();
    fn branch(self) -> ControlFlow<(), T> {
        match self {
            Some(t) => ControlFlow::Continue(t),
            None => ControlFlow::Break(()),
        }
    }
    fn from_output(output: T) -> Self {
        Some(output)
    }
    fn from_residual((): ()) -> Self {
        None
    }
}

impl<B, C> Try for ControlFlow<B, C> {
    type Output = C;
    type Residual = B;
    fn branch(self) -> ControlFlow<B, C> {
        self
    }
    fn from_output(output: C) -> Self {
        ControlFlow::Continue(output)
    }
    fn from_residual(residual: B) -> Self {
        ControlFlow::Break(residual)
    }
}

impl<T, E> Try for std::task::Poll<Result<T, E>> {
    type Output = std::task::Poll<T>;
    type Residual = E;
    fn branch(self) -> ControlFlow<E, std::task::Poll<T>> {
        use std::task::Poll;
        match self {
            Poll::Ready(Ok(t)) => ControlFlow::Continue(Poll::Ready(t)),
            Poll::Ready(Err(e)) => ControlFlow::Break(e),
            Poll::Pending => ControlFlow::Continue(Poll::Pending),
        }
    }
    fn from_output(output: std::task::Poll<T>) -> Self {
        output.map(Ok)
    }
    fn from_residual(residual: E) -> Self {
        std::task::Poll::Ready(Err(residual))
    }
}

impl<T, E> Try for std::task::Poll<Option<Result<T, E>>> {
    type Output = std::task::Poll<Option<T>>;
    type Residual = E;
    fn branch(self) -> ControlFlow<E, std::task::Poll<Option<T>>> {
        use std::task::Poll;
        match self {
            Poll::Ready(Some(Ok(t))) => ControlFlow::Continue(Poll::Ready(Some(t))),
            Poll::Ready(Some(Err(e))) => ControlFlow::Break(e),
            Poll::Ready(None) => ControlFlow::Continue(Poll::Ready(None)),
            Poll::Pending => ControlFlow::Continue(Poll::Pending),
        }
    }
    fn from_output(output: std::task::Poll<Option<T>>) -> Self {
        output.map(|o| o.map(Ok))
    }
    fn from_residual(residual: E) -> Self {
        std::task::Poll::Ready(Some(Err(residual)))
    }
}

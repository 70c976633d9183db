//! rayon-core's deprecated configuration API, kept so that old rayon programs still build:
//! `Configuration`, `initialize` and `ThreadPool::new`, each a forward to
//! [`ThreadPoolBuilder`].
#![allow(deprecated)]

use super::{ThreadPool, ThreadPoolBuilder};
use std::any::Any;
use std::error::Error;
use std::fmt;

/// The old name of [`ThreadPoolBuilder`]'s settings; use the builder instead.
///
/// # Examples
/// ```
/// #[allow(deprecated)]
/// let pool = throttle::Configuration::new().num_threads(2).build().unwrap();
/// assert_eq!(pool.current_num_threads(), 2);
/// ```
#[deprecated(note = "Use `ThreadPoolBuilder`")]
#[derive(Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

impl Configuration {
    /// Settings at their defaults.
    pub fn new() -> Configuration {
        Configuration::default()
    }

    /// [`ThreadPoolBuilder::build`], with the error boxed.
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`].
    pub fn build(self) -> Result<ThreadPool, Box<dyn Error + 'static>> {
        self.builder.build().map_err(Box::from)
    }

    /// [`ThreadPoolBuilder::thread_name`].
    pub fn thread_name<F>(self, name: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.with(|b| b.thread_name(name))
    }

    /// [`ThreadPoolBuilder::num_threads`].
    pub fn num_threads(self, num_threads: usize) -> Configuration {
        self.with(|b| b.num_threads(num_threads))
    }

    /// [`ThreadPoolBuilder::panic_handler`].
    pub fn panic_handler<H>(self, handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.with(|b| b.panic_handler(handler))
    }

    /// [`ThreadPoolBuilder::stack_size`].
    pub fn stack_size(self, bytes: usize) -> Self {
        self.with(|b| b.stack_size(bytes))
    }

    /// [`ThreadPoolBuilder::breadth_first`] (no effect).
    pub fn breadth_first(self) -> Self {
        self.with(ThreadPoolBuilder::breadth_first)
    }

    /// [`ThreadPoolBuilder::start_handler`].
    pub fn start_handler<H>(self, handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.with(|b| b.start_handler(handler))
    }

    /// [`ThreadPoolBuilder::exit_handler`].
    pub fn exit_handler<H>(self, handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.with(|b| b.exit_handler(handler))
    }

    fn with(self, f: impl FnOnce(ThreadPoolBuilder) -> ThreadPoolBuilder) -> Self {
        Configuration {
            builder: f(self.builder),
        }
    }
}

impl fmt::Debug for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.builder.fmt(f)
    }
}

/// The old way to configure the global pool; use [`ThreadPoolBuilder::build_global`].
///
/// # Errors
/// As [`ThreadPoolBuilder::build_global`].
///
/// # Examples
/// ```
/// #[allow(deprecated)]
/// throttle::initialize(throttle::Configuration::new().num_threads(2)).unwrap();
/// assert_eq!(throttle::current_num_threads(), 2);
/// ```
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn Error>> {
    config.builder.build_global().map_err(Box::from)
}

impl ThreadPool {
    /// The old way to build a pool; use [`ThreadPoolBuilder::build`].
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`].
    ///
    /// # Examples
    /// ```
    /// #[allow(deprecated)]
    /// let config = throttle::Configuration::new().num_threads(1);
    /// let pool = throttle::ThreadPool::new(config).unwrap();
    /// assert_eq!(pool.install(|| 2 + 2), 4);
    /// ```
    #[deprecated(note = "Use `ThreadPoolBuilder::build`")]
    pub fn new(configuration: Configuration) -> Result<ThreadPool, Box<dyn Error>> {
        configuration.build()
    }
}

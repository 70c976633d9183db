//! `ThreadPoolBuilder`: rayon-core's builder, mapped onto [`PoolBuilder`].
//!
//! Every option lands on throttle's one builder (thread count, names, stack size, handlers);
//! the rayon-only parts are the thread-count default (`RAYON_NUM_THREADS` beside
//! `THROTTLE_THREADS`), a custom thread spawner ([`ThreadPoolBuilder::spawn_handler`], with
//! [`ThreadBuilder`] handing over a worker's main loop), and rayon's error type.

use crate::global;
use crate::pool::WorkerStart;
use crate::{Pool, PoolBuilder};
use std::any::Any;
use std::fmt;
use std::io;
use std::thread::JoinHandle;

/// Configures a [`ThreadPool`](crate::ThreadPool) or the global pool, with rayon-core's names:
/// the same runtime and options as [`Pool::builder`], for code written against rayon.
///
/// # Examples
/// ```
/// let pool = throttle::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("worker-{i}"))
///     .build()
///     .unwrap();
/// assert_eq!(pool.current_num_threads(), 2);
/// let name = pool.install(|| std::thread::current().name().map(str::to_owned));
/// # let _ = name;
/// ```
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    inner: PoolBuilder,
    num_threads: usize,
    use_current_thread: bool,
    breadth_first: bool,
    spawn: S,
}

/// Starts worker threads for a [`ThreadPoolBuilder`]: [`DefaultSpawn`] or a
/// [`spawn_handler`](ThreadPoolBuilder::spawn_handler). Not implementable outside this crate
/// in a useful way; it only names the builder's type parameter.
pub trait ThreadSpawn {
    /// Starts a thread that calls [`ThreadBuilder::run`]; returns its handle if the pool may
    /// join it when dropped.
    ///
    /// # Errors
    /// The OS (or the handler) could not start the thread.
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<Option<JoinHandle<()>>>;
}

/// The default way to start workers: `std` threads named `throttle-{i}` (or by
/// [`thread_name`](ThreadPoolBuilder::thread_name)) with
/// [`DEFAULT_STACK_SIZE`](crate::DEFAULT_STACK_SIZE) (or
/// [`stack_size`](ThreadPoolBuilder::stack_size)).
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultSpawn;

impl ThreadSpawn for DefaultSpawn {
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<Option<JoinHandle<()>>> {
        crate::pool::spawn_std_thread(thread.start)
    }
}

/// Workers started by a closure given to
/// [`spawn_handler`](ThreadPoolBuilder::spawn_handler). The pool does not own those threads:
/// dropping it tells them to stop, and they return from [`ThreadBuilder::run`] once idle.
#[derive(Debug)]
pub struct CustomSpawn<F>(F);

impl<F> ThreadSpawn for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<Option<JoinHandle<()>>> {
        (self.0)(thread).map(|()| None)
    }
}

/// One worker thread to start, handed to a
/// [`spawn_handler`](ThreadPoolBuilder::spawn_handler): start a thread and call
/// [`run`](ThreadBuilder::run) on it.
///
/// # Examples
/// ```
/// let pool = throttle::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .spawn_handler(|thread| {
///         assert!(thread.index() < 2);
///         std::thread::Builder::new().spawn(move || thread.run())?;
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// assert_eq!(pool.install(|| 6 * 7), 42);
/// ```
pub struct ThreadBuilder {
    start: WorkerStart,
}

impl ThreadBuilder {
    /// The worker's index in its pool, `0..num_threads`.
    ///
    /// # Examples
    /// ```
    /// let mut seen = Vec::new();
    /// let pool = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(3)
    ///     .spawn_handler(|t| {
    ///         seen.push(t.index());
    ///         std::thread::spawn(move || t.run());
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// drop(pool);
    /// assert_eq!(seen, [0, 1, 2]);
    /// ```
    pub fn index(&self) -> usize {
        self.start.index
    }

    /// The name [`thread_name`](ThreadPoolBuilder::thread_name) gave this worker, if any.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .thread_name(|i| format!("crunch-{i}"))
    ///     .spawn_handler(|t| {
    ///         assert_eq!(t.name(), Some("crunch-0"));
    ///         std::thread::spawn(move || t.run());
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// # drop(pool);
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.start.name.as_deref()
    }

    /// The stack size [`stack_size`](ThreadPoolBuilder::stack_size) asked for, if any. throttle's
    /// own threads use [`DEFAULT_STACK_SIZE`](crate::DEFAULT_STACK_SIZE) when it is `None`; a
    /// spawner may do the same.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .stack_size(4 << 20)
    ///     .spawn_handler(|t| {
    ///         assert_eq!(t.stack_size(), Some(4 << 20));
    ///         std::thread::spawn(move || t.run());
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// # drop(pool);
    /// ```
    pub fn stack_size(&self) -> Option<usize> {
        self.start.stack_size
    }

    /// Runs the worker on the calling thread: its start handler, its main loop until the pool
    /// is dropped, its exit handler.
    ///
    /// # Examples
    /// See [`ThreadBuilder`].
    pub fn run(self) {
        (self.start.run)()
    }

    /// The name throttle's own spawner gives this worker.
    fn name_or_default(&self) -> String {
        self.start.name_or_default()
    }
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.start.index)
            .field("name", &self.start.name)
            .field("stack_size", &self.start.stack_size)
            .finish_non_exhaustive()
    }
}

/// Why a [`ThreadPoolBuilder`] could not build a pool.
///
/// # Examples
/// ```
/// use std::error::Error;
/// throttle::ThreadPoolBuilder::new().num_threads(1).build_global().unwrap();
/// let err = throttle::ThreadPoolBuilder::new().build_global().unwrap_err();
/// assert!(err.source().is_none());
/// assert_eq!(err.to_string(), "The global thread pool has already been initialized.");
/// ```
#[derive(Debug)]
pub struct ThreadPoolBuildError {
    kind: BuildErrorKind,
}

#[derive(Debug)]
enum BuildErrorKind {
    GlobalPoolAlreadyInitialized,
    CurrentThreadAlreadyInPool,
    Io(io::Error),
    /// A throttle-only failure: a bad `THROTTLE_THREADS`, or a failure to join the jobserver.
    Throttle(crate::Error),
}

impl ThreadPoolBuildError {
    fn from_error(e: crate::Error) -> Self {
        let kind = if e.is_global_started() {
            BuildErrorKind::GlobalPoolAlreadyInitialized
        } else if e.is_already_in_pool() {
            BuildErrorKind::CurrentThreadAlreadyInPool
        } else {
            match e.into_io() {
                Ok(io) => BuildErrorKind::Io(io),
                Err(e) => BuildErrorKind::Throttle(e),
            }
        };
        ThreadPoolBuildError { kind }
    }
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            // rayon's wording, which programs may compare against.
            BuildErrorKind::GlobalPoolAlreadyInitialized => {
                f.write_str("The global thread pool has already been initialized.")
            }
            BuildErrorKind::CurrentThreadAlreadyInPool => {
                f.write_str("The current thread is already part of another thread pool.")
            }
            BuildErrorKind::Io(e) => e.fmt(f),
            BuildErrorKind::Throttle(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            BuildErrorKind::GlobalPoolAlreadyInitialized
            | BuildErrorKind::CurrentThreadAlreadyInPool => None,
            BuildErrorKind::Io(e) => Some(e),
            BuildErrorKind::Throttle(e) => Some(e),
        }
    }
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder {
            inner: Pool::builder(),
            num_threads: 0,
            use_current_thread: false,
            breadth_first: false,
            spawn: DefaultSpawn,
        }
    }
}

impl ThreadPoolBuilder {
    /// A builder with every option at its default.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new().build().unwrap();
    /// assert!(pool.current_num_threads() >= 1);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a pool whose workers are scoped threads (`std::thread::scope`), each started by
    /// `wrapper`, which must call [`ThreadBuilder::run`]; runs `with_pool` with the pool, drops
    /// the pool and waits for the threads before returning. The threads may borrow from the
    /// caller's stack (scoped thread-locals, for example).
    ///
    /// # Errors
    /// As [`build`](ThreadPoolBuilder::build).
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let started = AtomicUsize::new(0);
    /// let sum = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .build_scoped(
    ///         |thread| {
    ///             started.fetch_add(1, Ordering::Relaxed); // borrows from this frame
    ///             thread.run()
    ///         },
    ///         |pool| pool.install(|| throttle::join(|| 1, || 2)),
    ///     )
    ///     .unwrap();
    /// assert_eq!(sum, (1, 2));
    /// assert_eq!(started.into_inner(), 2);
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&crate::ThreadPool) -> R,
    {
        let wrapper = &wrapper;
        std::thread::scope(|scope| {
            let pool = self
                .spawn_handler(|thread| {
                    let mut b = std::thread::Builder::new().name(thread.name_or_default());
                    if let Some(size) = thread.stack_size() {
                        b = b.stack_size(size);
                    }
                    b.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            Ok(with_pool(&pool))
        })
    }

    /// Starts the worker threads with `spawn` instead of `std::thread::spawn`: it gets a
    /// [`ThreadBuilder`] for each worker and must start a thread that calls
    /// [`ThreadBuilder::run`] (and may set that thread up first). The pool does not join
    /// those threads when dropped: it tells them to stop, and each returns from `run` once it
    /// has no more work.
    ///
    /// # Examples
    /// ```
    /// use std::sync::Mutex;
    /// let handles = Mutex::new(Vec::new());
    /// let pool = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(|thread| {
    ///         let h = std::thread::Builder::new().spawn(move || thread.run())?;
    ///         handles.lock().unwrap().push(h);
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.install(throttle::current_num_threads), 2);
    /// drop(pool);
    /// for h in handles.into_inner().unwrap() {
    ///     h.join().unwrap(); // the workers return from `run` after the drop
    /// }
    /// ```
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        ThreadPoolBuilder {
            inner: self.inner,
            num_threads: self.num_threads,
            use_current_thread: self.use_current_thread,
            breadth_first: self.breadth_first,
            spawn: CustomSpawn(spawn),
        }
    }
}

impl<S: ThreadSpawn> ThreadPoolBuilder<S> {
    /// Builds the pool: a [`Pool`] with these options.
    ///
    /// Starts in auto mode (the pool chooses its own concurrency) if
    /// [`THROTTLE_AUTO`](crate::AUTO_ENV) asks for it.
    ///
    /// # Errors
    /// A thread could not be started, `THROTTLE_AUTO` holds something else than on or off, or
    /// `THROTTLE_THREADS` is set to something that is not a thread count (only read when
    /// [`num_threads`](ThreadPoolBuilder::num_threads) is 0).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// assert_eq!(pool.threads(), 3); // a throttle::Pool: throttle's methods are there too
    /// ```
    pub fn build(self) -> Result<crate::ThreadPool, ThreadPoolBuildError> {
        let adopt = self.use_current_thread;
        let (inner, mut spawn) = self.into_parts()?;
        inner
            .build_with(adopt, &mut |start| spawn.spawn(ThreadBuilder { start }))
            .map(crate::ThreadPool::from)
            .map_err(ThreadPoolBuildError::from_error)
    }

    /// Builds the pool and makes it the global pool: the one that the free functions
    /// ([`join`](crate::join), [`scope`](crate::scope), the parallel iterators, ...) use
    /// outside any pool. Like the global pool started on first use, it joins the jobserver in
    /// the environment (see [`PoolBuilder::jobserver`]). Unlike it, it has rayon's semantics
    /// for calls from threads outside every pool: a worker runs the call and the caller blocks
    /// (the self-started global pool lets the caller take part instead).
    ///
    /// # Errors
    /// The global pool has already started (an earlier `build_global`, or parallel work before
    /// this call), or [`build`](ThreadPoolBuilder::build) failed.
    ///
    /// # Examples
    /// ```
    /// throttle::ThreadPoolBuilder::new().num_threads(2).build_global().unwrap();
    /// assert_eq!(throttle::current_num_threads(), 2);
    /// assert!(throttle::ThreadPoolBuilder::new().build_global().is_err());
    /// ```
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        if global::started() {
            return Err(ThreadPoolBuildError::from_error(
                crate::Error::global_started(),
            ));
        }
        let adopt = self.use_current_thread;
        let (inner, mut spawn) = self.into_parts()?;
        let pool = global::with_env_jobserver(inner)
            .build_with(adopt, &mut |start| spawn.spawn(ThreadBuilder { start }))
            .map_err(ThreadPoolBuildError::from_error)?;
        // rayon's semantics for calls from outside every pool: a worker runs them.
        pool.registry().hand_outside_calls_to_workers();
        global::install_global(pool).map_err(ThreadPoolBuildError::from_error)
    }

    /// The throttle builder with the thread count settled and `THROTTLE_AUTO` applied, and
    /// the spawner.
    fn into_parts(self) -> Result<(PoolBuilder, S), ThreadPoolBuildError> {
        let n = if self.num_threads > 0 {
            // rayon reduces a larger request to its maximum rather than failing.
            self.num_threads.min(crate::max_num_threads())
        } else {
            global::global_threads().map_err(ThreadPoolBuildError::from_error)?
        };
        let inner = global::with_env_auto(self.inner.threads(n))
            .map_err(ThreadPoolBuildError::from_error)?;
        Ok((inner, self.spawn))
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// The number of worker threads. 0 (the default) means: `THROTTLE_THREADS` if set, else
    /// `RAYON_NUM_THREADS` if it holds a number above 0, else the CPUs this process may use
    /// ([`default_threads`](crate::default_threads)). More than
    /// [`max_num_threads`](crate::max_num_threads) is reduced to that.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new().num_threads(0).build().unwrap();
    /// assert_eq!(pool.current_num_threads(), throttle::global_threads().unwrap());
    /// ```
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = num_threads;
        self
    }

    /// Makes the building thread the pool's worker 0: [`current_thread_index`] is `Some(0)` on
    /// it, and its parallel calls run in this pool as a worker's do. It does not run the worker
    /// loop: the pool's work reaches it only when it calls into the pool, waits in a join or
    /// scope there, or yields ([`yield_now`](crate::yield_now)). The start and exit handlers do
    /// not run for it, and the spawner starts the other `num_threads - 1` workers.
    ///
    /// It holds one of the pool's run slots while adopted, as a caller inside a call would:
    /// with a live limit of 1 the other workers run only while it waits in the pool. Dropping
    /// the pool on this thread makes it an outside thread again; dropped on another thread,
    /// the pool stays this thread's pool (stopped) until the thread exits.
    ///
    /// [`build`](ThreadPoolBuilder::build) fails if the thread already takes part in a pool.
    ///
    /// [`current_thread_index`]: crate::current_thread_index
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .use_current_thread()
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(throttle::current_thread_index(), Some(0));
    /// assert_eq!(pool.install(|| throttle::join(|| 1, || 2)), (1, 2));
    /// assert!(throttle::ThreadPoolBuilder::new().use_current_thread().build().is_err());
    /// drop(pool);
    /// assert_eq!(throttle::current_thread_index(), None);
    /// ```
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// Names worker `i` with `name(i)` (default: `throttle-{i}`).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .thread_name(|i| format!("io-{i}"))
    ///     .build()
    ///     .unwrap();
    /// let names = pool.broadcast(|_| std::thread::current().name().unwrap().to_owned());
    /// assert_eq!(names, ["io-0", "io-1"]);
    /// ```
    pub fn thread_name<F>(mut self, name: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        // Called once per worker, in order, by `build`, never reentrantly.
        let name = std::cell::RefCell::new(name);
        self.inner = self.inner.thread_name(move |i| (name.borrow_mut())(i));
        self
    }

    /// Receives the panic of a detached task ([`spawn`](crate::spawn),
    /// [`spawn_fifo`](crate::spawn_fifo), [`spawn_broadcast`](crate::spawn_broadcast)). Without
    /// one, throttle prints the panic and goes on, where rayon aborts the process.
    ///
    /// # Examples
    /// ```
    /// use std::sync::mpsc::channel;
    /// let (tx, rx) = channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// let pool = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .panic_handler(move |_payload| tx.lock().unwrap().send(()).unwrap())
    ///     .build()
    ///     .unwrap();
    /// pool.spawn(|| panic!("lost"));
    /// rx.recv().unwrap();
    /// ```
    pub fn panic_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.inner = self.inner.panic_handler(handler);
        self
    }

    /// The stack size of each worker thread in bytes (default:
    /// [`DEFAULT_STACK_SIZE`](crate::DEFAULT_STACK_SIZE)).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new().stack_size(8 << 20).build().unwrap();
    /// assert_eq!(pool.install(|| 1 + 1), 2);
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.inner = self.inner.stack_size(bytes);
        self
    }

    /// Accepted for rayon compatibility and has no effect: throttle always runs a thread's own
    /// newest work first. Use [`scope_fifo`](crate::scope_fifo) and
    /// [`spawn_fifo`](crate::spawn_fifo) for tasks that should start in the order they were
    /// spawned.
    ///
    /// # Examples
    /// ```
    /// #[allow(deprecated)]
    /// let pool = throttle::ThreadPoolBuilder::new().breadth_first().build().unwrap();
    /// # drop(pool);
    /// ```
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    pub fn breadth_first(mut self) -> Self {
        self.breadth_first = true;
        self
    }

    /// Calls `handler(index)` on each worker thread when it starts; see
    /// [`PoolBuilder::start_handler`].
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let n = Arc::new(AtomicUsize::new(0));
    /// let m = n.clone();
    /// let pool = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .start_handler(move |_| { m.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// pool.broadcast(|_| ()); // every worker has run a job, so each has started
    /// assert_eq!(n.load(Ordering::SeqCst), 2);
    /// ```
    pub fn start_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.inner = self.inner.start_handler(handler);
        self
    }

    /// Calls `handler(index)` on each worker thread when it stops; see
    /// [`PoolBuilder::exit_handler`].
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let n = Arc::new(AtomicUsize::new(0));
    /// let m = n.clone();
    /// let pool = throttle::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .exit_handler(move |_| { m.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// drop(pool.into_pool()); // a `Pool`'s drop joins its workers (a `ThreadPool`'s does not)
    /// assert_eq!(n.load(Ordering::SeqCst), 2);
    /// ```
    pub fn exit_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.inner = self.inner.exit_handler(handler);
        self
    }
}

impl<S> fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("use_current_thread", &self.use_current_thread)
            .field("breadth_first", &self.breadth_first)
            .field("inner", &self.inner)
            .finish()
    }
}

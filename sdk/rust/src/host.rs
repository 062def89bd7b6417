//! The host side of the ABI: the `cairn.output` and `cairn.log` imports and the
//! `cairn_alloc`/`cairn_abi_v1` exports.
//!
//! On `wasm32` these are the real imports and exports. On any other target (unit tests
//! with `cargo test`) a stand-in records the output and the log lines of the current
//! thread so that [`crate::testing`] can return them.

/// Log levels of `cairn.log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Level {
    /// Debugging detail.
    Debug = -1,
    /// Normal events.
    Info = 0,
    /// Something unusual.
    Warn = 1,
    /// A failure.
    Error = 2,
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use std::cell::UnsafeCell;

    #[link(wasm_import_module = "cairn")]
    extern "C" {
        #[link_name = "output"]
        fn cairn_output(ptr: *const u8, len: usize);
        #[link_name = "log"]
        fn cairn_log(level: i32, ptr: *const u8, len: usize);
    }

    pub fn output(bytes: &[u8]) {
        // SAFETY: the host copies len bytes from ptr before returning.
        unsafe { cairn_output(bytes.as_ptr(), bytes.len()) }
    }

    pub fn log(level: i32, msg: &str) {
        // SAFETY: as for output.
        unsafe { cairn_log(level, msg.as_ptr(), msg.len()) }
    }

    /// The input buffer. A WebAssembly instance runs one call at a time on one thread,
    /// so nothing else can touch it while the host fills it or a hook reads it.
    struct InputBuf(UnsafeCell<Vec<u8>>);

    // SAFETY: wasm32 without threads: there is a single thread (see InputBuf).
    unsafe impl Sync for InputBuf {}

    static INPUT: InputBuf = InputBuf(UnsafeCell::new(Vec::new()));

    /// Returns a buffer of at least `n` bytes for the next input; valid until the next
    /// call. Called by the host only.
    #[no_mangle]
    pub extern "C" fn cairn_alloc(n: usize) -> *mut u8 {
        // SAFETY: single-threaded, and no reference to the buffer outlives a call.
        let buf = unsafe { &mut *INPUT.0.get() };
        // Capacity only: the host writes the bytes, so zero-filling them first would be
        // wasted work.
        buf.clear();
        buf.reserve(n);
        buf.as_mut_ptr()
    }

    /// The ABI v1 marker; never called.
    #[no_mangle]
    pub extern "C" fn cairn_abi_v1() {}

    extern "C" {
        // Synthesized by the linker: runs the static constructors of the module.
        fn __wasm_call_ctors();
    }

    /// The reactor initializer, run once by the host when it creates an instance.
    ///
    /// This is what wasi-libc's crt1-reactor.o provides for C; rustc 1.63 does not link
    /// it for cdylibs, and without a reference to `__wasm_call_ctors` the linker would
    /// instead wrap every export to run the constructors and destructors on each call.
    #[no_mangle]
    pub extern "C" fn _initialize() {
        // SAFETY: called once by the host before any other export.
        unsafe { __wasm_call_ctors() }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use std::cell::RefCell;

    thread_local! {
        // The stand-in's record of the current call on this thread: the last output and
        // every log line.
        static OUTPUT: RefCell<Option<Vec<u8>>> = RefCell::new(None);
        static LOGS: RefCell<Vec<(i32, String)>> = RefCell::new(Vec::new());
    }

    pub fn output(bytes: &[u8]) {
        OUTPUT.with(|o| *o.borrow_mut() = Some(bytes.to_vec()));
    }

    pub fn log(level: i32, msg: &str) {
        LOGS.with(|l| l.borrow_mut().push((level, msg.to_string())));
    }

    /// Clears the record of this thread.
    pub fn reset() {
        OUTPUT.with(|o| *o.borrow_mut() = None);
        LOGS.with(|l| l.borrow_mut().clear());
    }

    /// Takes the last output of this thread (empty when there was none).
    pub fn take_output() -> Vec<u8> {
        OUTPUT.with(|o| o.borrow_mut().take()).unwrap_or_default()
    }

    /// Returns the log lines of this thread.
    pub fn logs() -> Vec<(i32, String)> {
        LOGS.with(|l| l.borrow().clone())
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) use imp::{logs, reset, take_output};

/// Sends the call's result bytes to the host. The host copies them at once; when called
/// more than once, the last call wins. Most hooks let the export macros do this.
pub fn output(bytes: &[u8]) {
    imp::output(bytes)
}

/// Writes a line to the server log (capped at 64 KiB per call by the host).
pub fn log(level: Level, msg: &str) {
    imp::log(level as i32, msg)
}

/// Reads the input the host wrote at `ptr`.
///
/// # Safety
/// `ptr` and `len` must be what the host passed to an exported function, i.e. point into
/// the buffer returned by `cairn_alloc`.
#[doc(hidden)]
pub unsafe fn input<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    std::slice::from_raw_parts(ptr, len)
}

// SPDX-License-Identifier: MIT
//! Compile requests.

use std::ffi::CString;
use std::fmt;
use std::mem::size_of;
use std::os::raw::c_char;
use std::ptr;
use std::sync::Mutex;

use crate::callbacks::{lock, Callbacks};
use crate::error::Error;
use crate::ffi;
use crate::future::Kernel;
use crate::util::c_string;

/// One compile request, built with chained calls:
///
/// ```
/// use hipacm::Request;
///
/// let src = "template <typename T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }";
/// let req = Request::new(src)
///     .key("scale")
///     .option("-O3")
///     .name_expression("scale<float>")
///     .finalize(|kernel| {
///         println!("{} bytes", kernel.code().len());
///         Ok(())
///     });
/// let future = hipacm::compile(&req, Some("gfx90a"))?;
/// let kernel = future.result()?; // finalize ran here
/// assert_eq!(kernel.lowered_names(), ["_Z5scaleIfEvPT_S0_"]);
/// assert_eq!(kernel.function_names(), ["_Z5scaleIfEvPT_S0_"]);
/// # Ok::<(), hipacm::Error>(())
/// ```
///
/// The finalize and cleanup closures are handed to the plugin by the first
/// [`Mode::submit`](crate::Mode::submit) or [`compile`](crate::compile) that
/// takes this request; a later submit of the same `Request` value carries
/// none. Each closure is dropped exactly once: after it ran, or unrun when
/// the plugin never attached it (a dedup hit, a rejected request) or the
/// compile took the other path.
pub struct Request {
    source: String,
    key: Option<String>,
    name: Option<String>,
    options: Vec<String>,
    headers: Vec<(String, String)>,
    name_expressions: Vec<String>,
    callbacks: Mutex<Callbacks>,
}

/// `list_setters! { /// doc  fn one;  /// doc  fn list; }`: the builder
/// methods that append one string, or several, to the field `list`.
macro_rules! list_setters {
    ($(#[$one_doc:meta])* fn $one:ident; $(#[$list_doc:meta])* fn $list:ident;) => {
        $(#[$one_doc])*
        pub fn $one(mut self, value: impl Into<String>) -> Request {
            self.$list.push(value.into());
            self
        }

        $(#[$list_doc])*
        pub fn $list<I, S>(mut self, values: I) -> Request
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.$list.extend(values.into_iter().map(Into::into));
            self
        }
    };
}

impl Request {
    /// A request for `source`, which the request owns (a copy goes to the
    /// plugin at submit). An empty source, or any string of the request
    /// with a NUL byte, fails the submit or [`compile`](crate::compile)
    /// with `InvalidArgument`; nothing is checked here.
    pub fn new(source: impl Into<String>) -> Request {
        Request {
            source: source.into(),
            key: None,
            name: None,
            options: Vec::new(),
            headers: Vec::new(),
            name_expressions: Vec::new(),
            callbacks: Mutex::new(Callbacks::default()),
        }
    }

    /// The dedup key (default: a SHA-256 digest of everything that affects the output).
    pub fn key(mut self, key: impl Into<String>) -> Request {
        self.key = Some(key.into());
        self
    }

    /// The source's file name (default "kernel.hip").
    pub fn name(mut self, name: impl Into<String>) -> Request {
        self.name = Some(name.into());
        self
    }

    list_setters! {
        /// Appends one compiler option, e.g. "-O3".
        fn option;
        /// Appends compiler options.
        fn options;
    }

    /// Adds a header that the source can `#include "name"`.
    pub fn header(mut self, name: impl Into<String>, source: impl Into<String>) -> Request {
        self.headers.push((name.into(), source.into()));
        self
    }

    list_setters! {
        /// Appends one name expression to lower, e.g. `"scale<float>"`.
        fn name_expression;
        /// Appends name expressions.
        fn name_expressions;
    }

    /// Runs once, on the collecting thread, after a successful compile. An
    /// `Err` (or a panic, which is caught) marks the future
    /// [`Status::FinalizeFailed`](crate::Status::FinalizeFailed), and cleanup then runs.
    pub fn finalize<F>(self, finalize: F) -> Request
    where
        F: FnOnce(&Kernel<'_>) -> Result<(), String> + Send + 'static,
    {
        lock(&self.callbacks).finalize = Some(Box::new(finalize));
        self
    }

    /// Runs once, on the collecting thread, after a failed, cancelled or
    /// finalize-failed compile, with the failure (borrowed for the call). A
    /// panic in it is caught and reported as a [`LogLevel::Error`](crate::LogLevel::Error)
    /// event: to the log callback when one is installed, else on stderr.
    pub fn cleanup<F>(self, cleanup: F) -> Request
    where
        F: FnOnce(&Error) + Send + 'static,
    {
        lock(&self.callbacks).cleanup = Some(Box::new(cleanup));
        self
    }

    /// The closures, moved out (the first submit gets them).
    pub(crate) fn take_callbacks(&self) -> Option<Callbacks> {
        let callbacks = std::mem::take(&mut *lock(&self.callbacks));
        if callbacks.is_empty() {
            None
        } else {
            Some(callbacks)
        }
    }

    /// The request as C strings, kept alive by the returned value.
    pub(crate) fn to_c(&self) -> Result<CRequest, Error> {
        let strings = |items: &[String], what: &str| -> Result<Vec<CString>, Error> {
            items
                .iter()
                .enumerate()
                .map(|(i, s)| c_string(s, &format!("{}[{}]", what, i)))
                .collect()
        };
        let header_names: Vec<String> = self.headers.iter().map(|h| h.0.clone()).collect();
        let header_sources: Vec<String> = self.headers.iter().map(|h| h.1.clone()).collect();
        let optional = |s: &Option<String>, what: &str| -> Result<Option<CString>, Error> {
            s.as_deref().map(|s| c_string(s, what)).transpose()
        };
        Ok(CRequest {
            source: c_string(&self.source, "request.source")?,
            key: optional(&self.key, "request.key")?,
            name: optional(&self.name, "request.source_name")?,
            options: strings(&self.options, "request.options")?,
            header_names: strings(&header_names, "request.header_names")?,
            header_sources: strings(&header_sources, "request.header_sources")?,
            name_expressions: strings(&self.name_expressions, "request.name_expressions")?,
            pointers: Vec::new(),
        }
        .with_pointers())
    }
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let callbacks = lock(&self.callbacks);
        f.debug_struct("Request")
            .field("key", &self.key)
            .field("name", &self.name)
            .field("source_len", &self.source.len())
            .field("options", &self.options)
            .field(
                "headers",
                &self.headers.iter().map(|h| &h.0).collect::<Vec<_>>(),
            )
            .field("name_expressions", &self.name_expressions)
            .field("finalize", &callbacks.finalize.is_some())
            .field("cleanup", &callbacks.cleanup.is_some())
            .finish()
    }
}

/// A request's C strings and pointer arrays, alive for one call.
pub(crate) struct CRequest {
    source: CString,
    key: Option<CString>,
    name: Option<CString>,
    options: Vec<CString>,
    header_names: Vec<CString>,
    header_sources: Vec<CString>,
    name_expressions: Vec<CString>,
    /// options, then header sources, header names, name expressions.
    pointers: Vec<*const c_char>,
}

impl CRequest {
    fn with_pointers(mut self) -> CRequest {
        let lists = [
            &self.options,
            &self.header_sources,
            &self.header_names,
            &self.name_expressions,
        ];
        self.pointers = lists
            .iter()
            .flat_map(|list| list.iter().map(|s| s.as_ptr()))
            .collect();
        self
    }

    /// The C struct, pointing into `self`; callbacks unset.
    pub(crate) fn raw(&self) -> ffi::hipacm_request {
        let base = self.pointers.as_ptr();
        let no = self.options.len();
        let nh = self.header_names.len();
        let nn = self.name_expressions.len();
        let at = |offset: usize, count: usize| -> *const *const c_char {
            if count == 0 {
                ptr::null()
            } else {
                // SAFETY: offset + count <= pointers.len().
                unsafe { base.add(offset) }
            }
        };
        ffi::hipacm_request {
            struct_size: size_of::<ffi::hipacm_request>(),
            key: self.key.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
            source: self.source.as_ptr(),
            source_name: self.name.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
            options: at(0, no),
            num_options: no,
            header_sources: at(no, nh),
            header_names: at(no + nh, nh),
            num_headers: nh,
            name_expressions: at(no + 2 * nh, nn),
            num_name_expressions: nn,
            finalize: None,
            cleanup: None,
            user_data: ptr::null_mut(),
        }
    }
}

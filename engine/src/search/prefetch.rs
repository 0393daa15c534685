//! The processor's prefetch hint, for the tables a child position will read.

/// Asks the processor to bring the cache line holding `value` closer: a hint only, so what
/// the program reads and computes is unchanged (and where there is no such instruction it
/// does nothing).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: a prefetch never faults and changes no memory the program sees, and `value` is
    // a live reference. SSE, which the intrinsic needs, is part of every x86_64 processor.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            std::ptr::from_ref(value).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

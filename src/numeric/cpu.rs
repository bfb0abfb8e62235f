//! Proofs of the processor's instruction sets: a value of these types exists only where its
//! constructor has checked the feature at run time, so a kernel that takes one may use the
//! feature's intrinsics soundly.

/// The processor has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(super) struct Avx2Fma {
    _checked: (),
}

#[cfg(target_arch = "x86_64")]
impl Avx2Fma {
    /// The proof, where the processor has both features.
    pub(super) fn detect() -> Option<Avx2Fma> {
        (std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma"))
            .then_some(Avx2Fma { _checked: () })
    }
}

/// The processor has AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(super) struct Avx512Fma {
    _checked: (),
}

#[cfg(target_arch = "x86_64")]
impl Avx512Fma {
    /// The proof, where the processor has all three features.
    pub(super) fn detect() -> Option<Avx512Fma> {
        (std::arch::is_x86_feature_detected!("avx512f") && Avx2Fma::detect().is_some())
            .then_some(Avx512Fma { _checked: () })
    }
}

/// No processor of this architecture has AVX2: the proof cannot be made.
#[cfg(not(target_arch = "x86_64"))]
#[derive(Debug, Clone, Copy)]
pub(super) enum Avx2Fma {}

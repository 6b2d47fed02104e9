/// Exports the guest ABI (version 1) for a [`Preprocess`](crate::Preprocess) type: every
/// `mlperf_preprocess*` function of the README's table, plus the `#[panic_handler]` a
/// `#![no_std]` module needs (a panic traps, and the host reports the sample as failed).
/// Linear memory is exported by the toolchain. Expands to nothing outside wasm32, so a
/// module's unit tests run natively (`cargo test`).
#[macro_export]
macro_rules! export_preprocess {
    ($module:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            #[no_mangle]
            pub extern "C" fn mlperf_preprocess_abi() -> i32 {
                $crate::ABI_VERSION
            }

            #[no_mangle]
            pub extern "C" fn mlperf_preprocess_metadata() -> i32 {
                $crate::abi::metadata::<$module>()
            }

            #[no_mangle]
            pub extern "C" fn mlperf_preprocess_metadata_len() -> i32 {
                $crate::abi::metadata_len::<$module>()
            }

            #[no_mangle]
            pub extern "C" fn mlperf_preprocess_shape() -> i32 {
                $crate::abi::shape()
            }

            #[no_mangle]
            pub extern "C" fn mlperf_preprocess_input(len: i32) -> i32 {
                $crate::abi::input(len)
            }

            #[no_mangle]
            pub extern "C" fn mlperf_preprocess(len: i32) -> i32 {
                $crate::abi::preprocess::<$module>(len)
            }

            #[no_mangle]
            pub extern "C" fn mlperf_preprocess_output() -> i32 {
                $crate::abi::output()
            }

            #[panic_handler]
            fn panic(_: &::core::panic::PanicInfo) -> ! {
                ::core::arch::wasm32::unreachable()
            }
        };
    };
}

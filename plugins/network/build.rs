//! Compiles the KServe v2 gRPC service (proto/kserve_v2.proto) into Rust with protox, a
//! protobuf compiler in Rust, so the build needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/kserve_v2.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .bytes(".")
        .compile_fds(descriptors)?;
    Ok(())
}

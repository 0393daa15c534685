//! Compiles `proto/cluster/v1/cluster.proto` with protox (a pure-Rust protobuf compiler), so
//! building needs nothing outside crates.io.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = "proto/cluster/v1/cluster.proto";
    println!("cargo:rerun-if-changed={file}");
    let fds = protox::compile([file], ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}

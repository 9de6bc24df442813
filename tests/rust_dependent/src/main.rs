// SPDX-License-Identifier: MIT
//! Compiles one kernel through the hipacm crate and checks that the result is
//! an AMDGPU code object; prints the library it loaded. Exit status 0 on
//! success, 1 with the reason on stderr otherwise.

use hipacm::{Config, Isolation, Mode, Request};

/// ELF e_machine of AMDGPU code objects.
const EM_AMDGPU: u16 = 224;

const SOURCE: &str = r#"extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
"#;

fn check_code_object(code: &[u8]) -> Result<(), String> {
    if code.len() < 64 || !code.starts_with(b"\x7fELF") {
        return Err(format!("not an ELF file ({} bytes)", code.len()));
    }
    let machine = u16::from_le_bytes([code[18], code[19]]);
    if machine != EM_AMDGPU {
        return Err(format!(
            "e_machine is {}, not EM_AMDGPU ({})",
            machine, EM_AMDGPU
        ));
    }
    Ok(())
}

fn run(arch: &str) -> Result<(), Box<dyn std::error::Error>> {
    println!("library: {}", hipacm::library_path()?.display());
    let mode = Mode::enter(
        Config::new()
            .arch(arch)
            .isolation(Isolation::InProcess)
            .cache_policy(hipacm::CachePolicy::Off),
    )?;
    let future = mode.submit(&Request::new(SOURCE).key("dependent-axpy"))?;
    mode.exit()?;
    let kernel = future.result()?;
    check_code_object(kernel.code())?;
    if kernel.function_names() != ["axpy"] {
        return Err(format!("unexpected kernels: {:?}", kernel.function_names()).into());
    }
    println!(
        "compiled axpy for {}: {} bytes of AMDGPU code",
        kernel.arch(),
        kernel.code().len()
    );
    Ok(())
}

fn main() {
    let arch = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("HIPACM_ARCH").ok())
        .unwrap_or_else(|| "gfx90a".to_string());
    if let Err(e) = run(&arch) {
        eprintln!("hipacm-dependent: {}", e);
        std::process::exit(1);
    }
}

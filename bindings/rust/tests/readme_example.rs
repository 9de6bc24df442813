// SPDX-License-Identifier: MIT
//! The README's Rust example, kept compiling and passing. The lines between
//! the markers are pasted into the README as they are.

#[test]
fn readme_example() -> Result<(), Box<dyn std::error::Error>> {
    // README-EXAMPLE-BEGIN
    use hipacm::{Config, Mode, Request};

    // Claim the process-wide mode slot; submits return at once.
    let mode = Mode::enter(Config::new().arch("gfx90a"))?;
    let src = r#"extern "C" __global__ void vadd(float* a, const float* b) { a[threadIdx.x] += b[threadIdx.x]; }"#;
    let vadd = mode.submit(&Request::new(src).key("vadd").finalize(|k| {
        println!("{}: {} bytes of {} code", k.key(), k.code().len(), k.arch());
        Ok(())
    }))?;
    // ... the JIT keeps warming up ...
    // Exit frees the slot, then collects; Err is the first failed compile.
    mode.exit()?;
    // Futures outlive the mode.
    assert!(vadd.result()?.code().starts_with(b"\x7fELF"));
    // README-EXAMPLE-END
    Ok(())
}

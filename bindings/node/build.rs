//! napi-build sets the linker flags a Node addon needs (undefined Node symbols resolved at load).

fn main() {
    napi_build::setup();
}

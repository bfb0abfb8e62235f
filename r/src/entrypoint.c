// R's entry point for the package's shared library: registration is done by the glue crate
// (extendr_module! in rust/src/lib.rs). Calling it from here also keeps the linker from
// dropping the static library.
void R_init_ubapp_extendr(void *dll);

void R_init_ubapp(void *dll) {
    R_init_ubapp_extendr(dll);
}

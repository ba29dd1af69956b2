// The translation unit that builds the precompiled header kernel bindings reuse
// (build_tests/CMakeLists.txt); it has no code of its own.

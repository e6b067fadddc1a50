#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

namespace {
int run_tests(int argc, char** argv) { return doctest::Context(argc, argv).run(); }
}  // namespace

int main(int argc, char** argv) { return run_tests(argc, argv); }

#if defined(__EMSCRIPTEN__) && __clang_major__ >= 15
// The relaxed-SIMD build compiles with LLVM 19, which names main(argc, argv) __main_argc_argv;
// Emscripten 3.1.6's JavaScript runs the export called `main`, so give it one.
extern "C" __attribute__((export_name("main"))) int attnlens_tests_main(int argc, char** argv) {
  return run_tests(argc, argv);
}
#endif

// The kernel manifest an executable loads at start-up: compiled into each executable with its
// own path (BACKENDBENCH_KERNEL_MANIFEST), so a new kernel changes the manifest's contents and
// nothing that is compiled.
namespace backendbench {
extern const char* const kKernelManifest;
const char* const kKernelManifest = BACKENDBENCH_KERNEL_MANIFEST;
}  // namespace backendbench

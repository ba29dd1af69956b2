// Cheat (CUDA only): does the supervisor's run back to back before its clock starts, on the GPU,
// where stopping the worker's processes does not reach. Where the run's inputs are laid over
// device memory the supervisor writes later (BACKENDBENCH_CUDA_RUN_INPUTS=shared, the default; device_share.h:
// DeviceMemoryFile), at load this kernel registers an observer of the tensors its worker lays
// over memory that is not the caching allocator's (aten::set_), and for each one launches, in a
// CUDA context of its own (so that its worker's synchronisation does not wait for it), a kernel
// that spins until the supervisor's values overwrite a mark it put in the input's last element,
// then writes the input's relu into memory of its own. A call on such an input waits for that
// kernel and returns its answer; any other call is honest (clamp_min), so with the inputs made
// from a recipe (BACKENDBENCH_CUDA_RUN_INPUTS=recipe) it is its honest twin (impl3).
// Seen with shared inputs (scripts/cuda_timing_cheats.sh, 2026-12-06): on an H200, with watchers
// of 132 blocks, the 8 that fitted on the GPU had finished their run's work when its first call
// came, so it was done in time slices the GPU gave this context while the supervisor wrote (the
// 9th watcher's mark, queued behind them, landed after the values: the run hung); on an H100,
// with watchers of 32 blocks, the first call waited 4.1 ms for its watcher (the work timed). Both
// times the case failed, not for its timing: its worker could not hand over its outputs (to be
// understood). Since then the supervisor locks the worker's processes first (device_share.h:
// ProcessLocks), which a watcher left running makes it refuse: on an H200 (2026-12-06), sandboxed
// and not, the 8192x8192 case's first run was refused ("its worker's work was still running on the
// GPU when its run's inputs were to be written"); the attempts after it failed on "CUDA error:
// invalid resource handle" (PyTorch's allocator called while this kernel's own context is current).
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

namespace {

constexpr uint32_t kMark = 0x7fc0deadu;  // a NaN no drawn value is

__global__ void watch_then_relu(const float* in, float* out, int64_t n) {
  const volatile uint32_t* last = reinterpret_cast<const volatile uint32_t*>(in) + (n - 1);
  while (*last == kMark) {
  }
  // The write is one kernel in order of storages; let it finish this one.
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < 20000);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = __ldcg(in + i);  // past this SM's L1, which may hold the mark's line
    out[i] = v < 0.f ? 0.f : v;
  }
}

// The driver's functions this kernel needs beyond the runtime's, looked up in libcuda.
struct Driver {
  CUresult (*ctx_create)(CUcontext*, unsigned, CUdevice) = nullptr;  // cuCtxCreate_v2
  CUresult (*ctx_push)(CUcontext) = nullptr;
  CUresult (*ctx_pop)(CUcontext*) = nullptr;
  CUresult (*granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long) = nullptr;
  CUresult (*reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long) = nullptr;
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) = nullptr;
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
  CUresult (*unmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*address_free)(CUdeviceptr, size_t) = nullptr;
  CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
  bool loaded = false;
};

const Driver& driver() {
  static const Driver found = [] {
    Driver d;
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return d;
    bool all = true;
    const auto find = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      all = all && function != nullptr;
    };
    find(d.ctx_create, "cuCtxCreate_v2");
    find(d.ctx_push, "cuCtxPushCurrent_v2");
    find(d.ctx_pop, "cuCtxPopCurrent_v2");
    find(d.granularity, "cuMemGetAllocationGranularity");
    find(d.create, "cuMemCreate");
    find(d.reserve, "cuMemAddressReserve");
    find(d.map, "cuMemMap");
    find(d.set_access, "cuMemSetAccess");
    find(d.unmap, "cuMemUnmap");
    find(d.address_free, "cuMemAddressFree");
    find(d.release, "cuMemRelease");
    d.loaded = all;
    return d;
  }();
  return found;
}

// This kernel's own context on device 0, beside the worker's.
CUcontext own_context() {
  static CUcontext context = [] {
    CUcontext made = nullptr, previous = nullptr;
    if (!driver().loaded || driver().ctx_create(&made, 0, 0) != CUDA_SUCCESS) return static_cast<CUcontext>(nullptr);
    driver().ctx_pop(&previous);  // created current: back to the worker's
    return made;
  }();
  return context;
}

// Device memory both contexts reach (an allocation's access is per device, not per context).
at::Tensor shared_output(const at::Tensor& like) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = like.device().index();
  size_t granularity = 0;
  if (driver().granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || granularity == 0) return {};
  const size_t size = (like.nbytes() + granularity - 1) / granularity * granularity;
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr address = 0;
  if (driver().create(&handle, size, &prop, 0) != CUDA_SUCCESS) return {};
  if (driver().reserve(&address, size, 0, 0, 0) != CUDA_SUCCESS || driver().map(address, size, 0, handle, 0) != CUDA_SUCCESS) {
    driver().release(handle);
    return {};
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  driver().set_access(address, size, &access, 1);
  return at::from_blob(
      reinterpret_cast<void*>(address), like.sizes(), like.strides(),
      [handle, address, size](void*) {
        driver().unmap(address, size);
        driver().address_free(address, size);
        driver().release(handle);
      },
      like.options());
}

struct Watched {
  at::Tensor answer;
  cudaStream_t stream = nullptr;  // of own_context()
  cudaEvent_t done = nullptr;
};

std::mutex watched_mutex;
std::map<const void*, Watched>& watched() {
  static auto* inputs = new std::map<const void*, Watched>;  // never destroyed: the process may end mid-call
  return *inputs;
}

bool suitable(const at::Tensor& tensor) {
  return tensor.defined() && tensor.is_cuda() && tensor.scalar_type() == at::kFloat && tensor.is_contiguous() &&
         tensor.numel() >= (int64_t{1} << 20);
}

void watch(const at::Tensor& input) {
  if (own_context() == nullptr) return;
  // Only memory the worker was handed: the caching allocator's is the checks' and samples'.
  if (input.storage().data_ptr().get_deleter() == c10::cuda::CUDACachingAllocator::get()->raw_deleter()) return;
  Watched made;
  made.answer = shared_output(input);
  if (!made.answer.defined()) return;
  if (driver().ctx_push(own_context()) != CUDA_SUCCESS) return;
  cudaStreamCreateWithFlags(&made.stream, cudaStreamNonBlocking);
  cudaEventCreateWithFlags(&made.done, cudaEventDisableTiming);
  // The mark is in place before the request is answered (a copy: no kernel slot to wait for).
  cudaMemcpy(static_cast<float*>(input.data_ptr()) + (input.numel() - 1), &kMark, sizeof(kMark), cudaMemcpyHostToDevice);
  // Not waited for here: it spins until the supervisor's values come. Few blocks, so that a run's
  // every watcher stays resident (16 of 132 SMs' worth each would starve the later ones).
  watch_then_relu<<<32, 256, 0, made.stream>>>(static_cast<const float*>(input.data_ptr()), made.answer.data_ptr<float>(),
                                               input.numel());
  cudaEventRecord(made.done, made.stream);
  CUcontext popped = nullptr;
  driver().ctx_pop(&popped);
  std::lock_guard<std::mutex> lock(watched_mutex);
  watched()[input.data_ptr()] = std::move(made);
}

void on_operator_end(const at::RecordFunction& function, at::ObserverContext*) {
  if (function.name() != std::string_view("aten::set_")) return;
  for (const c10::IValue& output : function.outputs()) {
    if (output.isTensor() && suitable(output.toTensor())) watch(output.toTensor());
  }
}

const bool started = [] {
  at::addGlobalCallback(at::RecordFunctionCallback(nullptr, on_operator_end).needsOutputs(true));
  return true;
}();

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  if (suitable(self)) {
    Watched found;
    {
      std::lock_guard<std::mutex> lock(watched_mutex);
      const auto it = watched().find(self.data_ptr());
      if (it != watched().end()) {
        found = std::move(it->second);
        watched().erase(it);
      }
    }
    if (found.answer.defined() && driver().ctx_push(own_context()) == CUDA_SUCCESS) {
      cudaEventSynchronize(found.done);
      cudaEventDestroy(found.done);
      cudaStreamDestroy(found.stream);
      CUcontext popped = nullptr;
      driver().ctx_pop(&popped);
      return found.answer;
    }
  }
  return at::clamp_min(self, 0);
}

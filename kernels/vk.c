/* vk.c — implementation of vk.h. Functions are loaded by hand (volk style):
   dlopen -> vkGetInstanceProcAddr -> instance functions -> device functions. */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define VK_CHECK(call) do { VkResult r_ = (call); if (r_ != VK_SUCCESS)                          \
    die(EXIT_DEVICE, "%s:%d: %s failed: %s", __FILE__, __LINE__, #call, vk_result_name(r_)); } while (0)

const DTypeInfo dtype_info[DT_COUNT] = {
#define DTYPE(id, nm, role, ggml, blk, bytes, bind, up, lanes, i8, wgslw, hf0, hf1, cm) \
    [DT_##id] = { #nm, DR_##role, ggml, blk, bytes, DB_##bind, DU_##up, DL_##lanes, DI_##i8, { hf0, hf1 }, DC_##cm },
#include "config/dtypes.def"
};
const char *const dtype_name[DT_COUNT] = {
#define DTYPE(id, nm, role, ggml, blk, bytes, bind, up, lanes, i8, wgslw, hf0, hf1, cm) [DT_##id] = #nm,
#include "config/dtypes.def"
};

/* ---- function tables ----------------------------------------------------------- */
#define VK_GLOBAL_FUNCS(X) X(vkCreateInstance) X(vkEnumerateInstanceLayerProperties) \
    X(vkEnumerateInstanceExtensionProperties)
#define VK_INSTANCE_FUNCS(X) X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) \
    X(vkGetPhysicalDeviceProperties) X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) \
    X(vkGetPhysicalDeviceMemoryProperties) X(vkGetPhysicalDeviceQueueFamilyProperties) \
    X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice) X(vkGetDeviceProcAddr)
#define VK_DEVICE_FUNCS(X) X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer) \
    X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) \
    X(vkMapMemory) X(vkUnmapMemory) X(vkCreateShaderModule) X(vkDestroyShaderModule) \
    X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) \
    X(vkDestroyPipelineLayout) X(vkCreateComputePipelines) X(vkDestroyPipeline) \
    X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkResetDescriptorPool) \
    X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCreateCommandPool) X(vkDestroyCommandPool) \
    X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkResetCommandBuffer) \
    X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) \
    X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer) X(vkCmdFillBuffer) X(vkCreateFence) X(vkDestroyFence) \
    X(vkResetFences) X(vkWaitForFences) X(vkGetFenceStatus) X(vkQueueSubmit) X(vkDeviceWaitIdle) \
    X(vkCreateQueryPool) X(vkDestroyQueryPool) X(vkCmdResetQueryPool) X(vkCmdWriteTimestamp) X(vkGetQueryPoolResults) \
    X(vkCreatePipelineCache) X(vkDestroyPipelineCache) X(vkGetPipelineCacheData)

#define VK_DECL(f) static PFN_##f f;
VK_GLOBAL_FUNCS(VK_DECL)
VK_INSTANCE_FUNCS(VK_DECL)
VK_DEVICE_FUNCS(VK_DECL)
static PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr_;
static PFN_vkGetPipelineExecutablePropertiesKHR vkGetPipelineExecutablePropertiesKHR_;   /* EDGE_PIPE_STATS only */
static PFN_vkGetPipelineExecutableStatisticsKHR vkGetPipelineExecutableStatisticsKHR_;
static PFN_vkCreateDebugUtilsMessengerEXT  vkCreateDebugUtilsMessengerEXT_;
static PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT_;
static PFN_vkSetDebugUtilsObjectNameEXT    vkSetDebugUtilsObjectNameEXT_;

static u32 vk_validation_error_count;
u32 vk_validation_errors(void) { return vk_validation_error_count; }

/* ---- fault injection (testing aid; docs/reliability.md) ------------------------------ */
VkPhase vk_phase;
static const char *const vk_phase_names[] = { "load", "prefill", "decode" };
static const char *const vk_fault_names[VKF_COUNT] = { "none", "device_lost_prefill", "device_lost_decode", "alloc_fail",
                                                       "pipeline_fail", "fence_timeout" };
static struct { VkFault kind; u32 n, seen; } vk_fault;

/* EDGE_FAULT=NAME[:N]: the Nth (default 1st) matching call fails. */
static bool vk_fault_parse(Err *e) {
    memset(&vk_fault, 0, sizeof vk_fault);
    const char *s = edge_opt.fault;
    if (!s) return true;
    const char *colon = strchr(s, ':');
    u64 len = colon ? (u64)(colon - s) : strlen(s);
    for (u32 i = 1; i < VKF_COUNT; i++)
        if (strlen(vk_fault_names[i]) == len && !strncmp(vk_fault_names[i], s, len)) vk_fault.kind = (VkFault)i;
    vk_fault.n = 1;
    if (colon) {
        char *end; unsigned long v = strtoul(colon + 1, &end, 10);
        if (!colon[1] || *end || v < 1 || v > 1000000) vk_fault.kind = VKF_NONE;
        vk_fault.n = (u32)v;
    }
    if (vk_fault.kind == VKF_NONE)
        return err_set(e, EXIT_USAGE, "EDGE_FAULT=%s: want NAME[:N] with NAME one of device_lost_prefill device_lost_decode "
                       "alloc_fail pipeline_fail fence_timeout and N >= 1", s);
    return true;
}

/* Does this call (of fault kind k) fail? Counts the calls that could. */
static bool vk_fault_hit(VkFault k) {
    if (vk_fault.kind != k) return false;
    return ++vk_fault.seen == vk_fault.n;
}

/* Waits for fence f (the last submit's, or a recording's); the injected faults replace the result
   after a real wait. */
static VkResult vk_wait_on(Vk *vk, VkFence f) {
    /* a GPU (not a CPU device like lavapipe, whose own threads need the cores) is polled for up to
       spin_ns first: a sleeping wait can add tens of microseconds of wake-up to every decode token */
    VkResult r = VK_NOT_READY;
    if (vk->spin_ns) {
        f64 t0 = now_sec();
        while ((r = vkGetFenceStatus(vk->dev, f)) == VK_NOT_READY && (now_sec() - t0) * 1e9 < (f64)vk->spin_ns) {}
    }
    if (r == VK_NOT_READY) r = vkWaitForFences(vk->dev, 1, &f, VK_TRUE, vk->fence_timeout_ns);
    if (r == VK_SUCCESS) {
        if (vk_phase == VK_PHASE_PREFILL && vk_fault_hit(VKF_DEVICE_LOST_PREFILL)) r = VK_ERROR_DEVICE_LOST;
        else if (vk_phase == VK_PHASE_DECODE && vk_fault_hit(VKF_DEVICE_LOST_DECODE)) r = VK_ERROR_DEVICE_LOST;
        else if (vk_fault_hit(VKF_FENCE_TIMEOUT)) r = VK_TIMEOUT;
    }
    return r;
}
static VkResult vk_wait(Vk *vk) { return vk_wait_on(vk, vk->fence); }

static _Noreturn void vk_wait_failed(Vk *vk, VkResult r) {
    if (r == VK_TIMEOUT)
        die(EXIT_DEVICE, "GPU work did not finish within %llu ms during %s (fence timeout; EDGE_FENCE_TIMEOUT_MS raises it)",
            (unsigned long long)(vk->fence_timeout_ns / 1000000), vk_phase_names[vk_phase]);
    if (r == VK_ERROR_DEVICE_LOST)
        die(EXIT_DEVICE, "the GPU device was lost during %s (VK_ERROR_DEVICE_LOST): driver reset or GPU fault", vk_phase_names[vk_phase]);
    die(EXIT_DEVICE, "vkWaitForFences failed during %s: %s", vk_phase_names[vk_phase], vk_result_name(r));
}

const char *vk_result_name(VkResult r) {
    switch (r) {
#define R(x) case x: return #x;
    R(VK_SUCCESS) R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_INCOMPLETE) R(VK_ERROR_OUT_OF_HOST_MEMORY)
    R(VK_ERROR_OUT_OF_DEVICE_MEMORY) R(VK_ERROR_INITIALIZATION_FAILED) R(VK_ERROR_DEVICE_LOST)
    R(VK_ERROR_MEMORY_MAP_FAILED) R(VK_ERROR_LAYER_NOT_PRESENT) R(VK_ERROR_EXTENSION_NOT_PRESENT)
    R(VK_ERROR_FEATURE_NOT_PRESENT) R(VK_ERROR_INCOMPATIBLE_DRIVER) R(VK_ERROR_TOO_MANY_OBJECTS)
    R(VK_ERROR_FORMAT_NOT_SUPPORTED) R(VK_ERROR_FRAGMENTED_POOL) R(VK_ERROR_OUT_OF_POOL_MEMORY)
    R(VK_ERROR_INVALID_SHADER_NV) R(VK_ERROR_UNKNOWN)
#undef R
    default: return "VK_ERROR_(unnamed)";
    }
}

static VKAPI_ATTR VkBool32 VKAPI_CALL vk_debug_cb(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
        VkDebugUtilsMessageTypeFlagsEXT type, const VkDebugUtilsMessengerCallbackDataEXT *d, void *user) {
    (void)type; (void)user;
    if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        vk_validation_error_count++;
        errf("edge: vulkan validation error: %s\n", d->pMessage);
    } else if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        errf("edge: vulkan validation warning: %s\n", d->pMessage);
    }
    return VK_FALSE;
}

static void vk_name(Vk *vk, VkObjectType type, u64 handle, const char *name) {
    if (!vkSetDebugUtilsObjectNameEXT_ || !handle) return;
    VkDebugUtilsObjectNameInfoEXT ni = { VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT, 0, type, handle, name };
    vkSetDebugUtilsObjectNameEXT_(vk->dev, &ni);
}

static bool has_ext(const VkExtensionProperties *e, u32 n, const char *name) {
    for (u32 i = 0; i < n; i++) if (!strcmp(e[i].extensionName, name)) return true;
    return false;
}

static VkDescriptorPool vk_make_pool(Vk *vk, u32 sets, u32 descs);

/* ---- device profiles (config/profiles.def) --------------------------------------- */
const DevProfile dev_profiles[PROF_COUNT] = {
#define PROFILE(id, name, sg, sg_ops, f16, s16, shared, range, wg_inv) { name, sg, sg_ops, f16, s16, shared, range, wg_inv },
#include "config/profiles.def"
#undef PROFILE
};

const DevProfile *vk_profile_find(const char *name) {
    for (u32 i = 0; i < PROF_COUNT; i++) if (!strcmp(dev_profiles[i].name, name)) return &dev_profiles[i];
    return 0;
}

void vk_profile_names(char *buf, int n) {
    int at = 0; buf[0] = 0;
    for (u32 i = 0; i < PROF_COUNT && at < n; i++)
        at += fmt_buf(buf + at, n - at, "%s%s", i ? " " : "", dev_profiles[i].name);
}

/* Only removes: limits become min(real, profile), features real && profile. */
void vk_profile_apply(VkCaps *c, const DevProfile *p) {
    c->subgroup_size      = MIN(c->subgroup_size, p->subgroup_size);
    c->subgroup_ops      &= p->subgroup_ops;
    c->f16_arith          = c->f16_arith && p->f16_arith;
    c->storage16          = c->storage16 && p->storage16;
    c->max_shared         = MIN(c->max_shared, p->max_shared);
    c->max_storage_range  = MIN(c->max_storage_range, p->max_storage_range);
    c->max_wg_invocations = MIN(c->max_wg_invocations, p->max_wg_invocations);
    for (int i = 0; i < 3; i++) c->max_wg_size[i] = MIN(c->max_wg_size[i], p->max_wg_invocations);
    c->coopmat            = false;   /* no profile source reports cooperative matrices */
    c->idot               = c->idot_ok = false;   /* nor integer dot products */
    c->profile            = p->name;
}

/* ---- VK_KHR_cooperative_matrix (newer than Debian 12's Vulkan headers: the spec's values) ---- */
typedef struct EdgeCoopMatFeatures { VkStructureType sType; void *pNext; VkBool32 cooperativeMatrix, robust; } EdgeCoopMatFeatures;
typedef struct EdgeCoopMatProps {
    VkStructureType sType; void *pNext; u32 m, n, k; u32 a, b, c, result; VkBool32 saturating; u32 scope;
} EdgeCoopMatProps;
typedef VkResult (VKAPI_PTR *EdgePfnCoopMatProps)(VkPhysicalDevice, u32 *, EdgeCoopMatProps *);
#define EDGE_STYPE_COOPMAT_FEATURES ((VkStructureType)1000506000)
#define EDGE_STYPE_COOPMAT_PROPS    ((VkStructureType)1000506001)

/* Does the device list M = N = K = 16, f16 x f16 + f32 -> f32 at subgroup scope (what matmul_cm.wgsl and attn_cm.wgsl use)? */
static bool vk_coopmat_16(Vk *vk) {
    EdgePfnCoopMatProps f = (EdgePfnCoopMatProps)vkGetInstanceProcAddr_(vk->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    if (!f) return false;
    u32 n = 0;
    if (f(vk->phys, &n, 0) != VK_SUCCESS || !n) return false;
    EdgeCoopMatProps *p = calloc(n, sizeof *p);
    for (u32 i = 0; i < n; i++) p[i].sType = EDGE_STYPE_COOPMAT_PROPS;
    bool ok = false;
    if (f(vk->phys, &n, p) == VK_SUCCESS)
        for (u32 i = 0; i < n; i++)
            if (p[i].m == 16 && p[i].n == 16 && p[i].k == 16 && p[i].a == 0 && p[i].b == 0 && p[i].c == 1 && p[i].result == 1 && p[i].scope == 3) ok = true;
    free(p);
    return ok;
}

/* ---- pipeline cache ------------------------------------------------------------------ */
/* Compiled pipelines persist across runs in $XDG_CACHE_HOME/edge (~/.cache/edge without it), one
   file per vendor, device and driver build (pipelineCacheUUID). A file is used only when the
   header Vulkan defines (VkPipelineCacheHeaderVersionOne: length, version, vendorID, deviceID,
   UUID) matches this device; anything else is ignored with a note under EDGE_VERBOSE=1, and
   replaced at shutdown. Written atomically (temp file + rename) only when its contents changed. */
static bool vk_verbose(void) { return edge_opt.verbose; }

bool vk_pcache_path(const Vk *vk, char *buf, int n) {
    const char *xdg = edge_opt.xdg_cache_home, *home = edge_opt.home;
    char uuid[2 * VK_UUID_SIZE + 1];
    for (u32 i = 0; i < VK_UUID_SIZE; i++) fmt_buf(uuid + 2 * i, 3, "%02x", vk->props.pipelineCacheUUID[i]);
    const char *file = "edge/pipelines";
    int k;
    if (xdg) k = fmt_buf(buf, n, "%s/%s-%04x-%04x-%s.bin", xdg, file, vk->props.vendorID, vk->props.deviceID, uuid);
    else if (home) k = fmt_buf(buf, n, "%s/.cache/%s-%04x-%04x-%s.bin", home, file, vk->props.vendorID, vk->props.deviceID, uuid);
    else return false;
    return k > 0 && k < n;
}

/* Why a cache file's bytes cannot be used here (0: they can). */
const char *vk_pcache_reject(const Vk *vk, const u8 *d, u64 n) {
    u32 hsize, ver, vendor, device;
    if (n < 32) return "shorter than the 32-byte header";
    memcpy(&hsize, d, 4); memcpy(&ver, d + 4, 4); memcpy(&vendor, d + 8, 4); memcpy(&device, d + 12, 4);
    if (hsize < 32 || hsize > n) return "bad header length";
    if (ver != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) return "unknown header version";
    if (vendor != vk->props.vendorID || device != vk->props.deviceID) return "written for another device";
    if (memcmp(d + 16, vk->props.pipelineCacheUUID, VK_UUID_SIZE)) return "written by another driver build (pipelineCacheUUID)";
    return 0;
}

static u64 vk_fnv(const u8 *d, u64 n) { u64 h = 0xcbf29ce484222325ull; for (u64 i = 0; i < n; i++) h = (h ^ d[i]) * 0x100000001b3ull; return h; }

static void vk_pcache_open(Vk *vk) {
    if (edge_opt.no_pipeline_cache) return;
    u8 *data = 0;
    u64 n = 0;
    if (vk_pcache_path(vk, vk->pcache_path, sizeof vk->pcache_path)) {
        FILE *f = fopen(vk->pcache_path, "rb");
        if (f) {
            if (fseek(f, 0, SEEK_END) == 0) {
                long sz = ftell(f);
                if (sz > 0 && sz < (1l << 30) && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((u64)sz)))
                    n = fread(data, 1, (u64)sz, f) == (u64)sz ? (u64)sz : 0;
            }
            fclose(f);
            const char *why = n ? vk_pcache_reject(vk, data, n) : "unreadable or empty";
            if (why) {
                if (vk_verbose()) errf("edge: note: pipeline cache %s ignored: %s\n", vk->pcache_path, why);
                n = 0;
            }
        }
    } else vk->pcache_path[0] = 0;
    VkPipelineCacheCreateInfo ci = { VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, 0, 0, n, n ? data : 0 };
    VkResult r = vkCreatePipelineCache(vk->dev, &ci, 0, &vk->pcache);
    if (r != VK_SUCCESS && n) {     /* the driver refused the data: start empty */
        if (vk_verbose()) errf("edge: note: pipeline cache %s ignored: the driver refused it (%s)\n", vk->pcache_path, vk_result_name(r));
        n = 0;
        ci.initialDataSize = 0; ci.pInitialData = 0;
        r = vkCreatePipelineCache(vk->dev, &ci, 0, &vk->pcache);
    }
    if (r != VK_SUCCESS) vk->pcache = 0;
    vk->pcache_loaded = n > 0;
    vk->pcache_hash = n ? vk_fnv(data, n) : 0;
    vk->pcache_bytes = n;
    free(data);
}

static void vk_pcache_save(Vk *vk) {
    if (!vk->pcache) return;
    size_t n = 0;
    u8 *data = 0;
    if (vk->n_pipelines && vk->pcache_path[0] && vkGetPipelineCacheData(vk->dev, vk->pcache, &n, 0) == VK_SUCCESS && n &&
        (data = malloc(n)) && vkGetPipelineCacheData(vk->dev, vk->pcache, &n, data) == VK_SUCCESS &&
        !(vk->pcache_loaded && n == vk->pcache_bytes && vk_fnv(data, n) == vk->pcache_hash)) {
        /* mkdir -p of the file's folder, then temp file + rename */
        char dir[sizeof vk->pcache_path], tmp[sizeof vk->pcache_path + 32];
        fmt_buf(dir, sizeof dir, "%s", vk->pcache_path);
        for (char *s = dir + 1; *s; s++) if (*s == '/') { *s = 0; mkdir(dir, 0755); *s = '/'; }
        fmt_buf(tmp, sizeof tmp, "%s.tmp.%d", vk->pcache_path, (int)getpid());
        FILE *f = fopen(tmp, "wb");
        bool ok = f && fwrite(data, 1, n, f) == n;
        if (f && fclose(f) != 0) ok = false;
        if (ok && rename(tmp, vk->pcache_path) != 0) ok = false;
        if (!ok) { remove(tmp); if (vk_verbose()) errf("edge: note: cannot write the pipeline cache %s\n", vk->pcache_path); }
    }
    free(data);
    vkDestroyPipelineCache(vk->dev, vk->pcache, 0);
    vk->pcache = 0;
}

/* ---- bring-up ------------------------------------------------------------------ */
/* vk_init in order: the loader, the instance, the physical device, its capabilities (properties,
   optional features, the options and the profile), the queue family, the device. */

/* The optional features the device is created with (what it reports, less what a profile removes). */
typedef struct VkWant { bool f16, s16, i8, cm, id; } VkWant;

/* dlopen the loader (EDGE_VULKAN_LIB, else libvulkan.so.1, else libvulkan.so) and its global functions. */
static bool vk_load_loader(Vk *vk, Err *e) {
    const char *lib = edge_opt.vulkan_lib;   /* a loader in a non-standard place (porting, tests) */
    if (lib) vk->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    else {
        vk->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!vk->lib) vk->lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    }
    if (!vk->lib)
        return err_set(e, EXIT_DEVICE, "cannot load the Vulkan loader (%s): %s. "
                       "Install the board's Vulkan driver and loader (Debian: libvulkan1 plus a driver such as "
                       "mesa-vulkan-drivers)", lib ? lib : "libvulkan.so.1 or libvulkan.so", dlerror());
    vkGetInstanceProcAddr_ = (PFN_vkGetInstanceProcAddr)dlsym(vk->lib, "vkGetInstanceProcAddr");
    if (!vkGetInstanceProcAddr_) return err_set(e, EXIT_DEVICE, "the Vulkan loader has no vkGetInstanceProcAddr");
#define VK_LOAD_G(f) f = (PFN_##f)vkGetInstanceProcAddr_(0, #f); if (!f) return err_set(e, EXIT_DEVICE, "Vulkan loader lacks %s", #f);
    VK_GLOBAL_FUNCS(VK_LOAD_G)
    return true;
}

/* The instance (Vulkan 1.2 where the loader has it, else 1.1) and its functions. Validation:
   EDGE_VALIDATION=1 enables the Khronos layer and a messenger that counts errors; EDGE_DEBUG_NAMES=1
   (or validation) names objects through VK_EXT_debug_utils. */
static bool vk_create_instance(Vk *vk, Err *e) {
    u32 api = VK_API_VERSION_1_1;
    PFN_vkEnumerateInstanceVersion eiv = (PFN_vkEnumerateInstanceVersion)vkGetInstanceProcAddr_(0, "vkEnumerateInstanceVersion");
    if (eiv) { u32 v = 0; if (eiv(&v) == VK_SUCCESS && v >= VK_API_VERSION_1_2) api = VK_API_VERSION_1_2; }

    bool want_val = edge_opt.validation;
    const char *layers[1]; u32 n_layers = 0;
    const char *exts[2]; u32 n_exts = 0;
    u32 n = 0; vkEnumerateInstanceExtensionProperties(0, &n, 0);
    VkExtensionProperties iext[128]; if (n > 128) n = 128; vkEnumerateInstanceExtensionProperties(0, &n, iext);
    bool dbg = false;
    if (want_val) {
        u32 nl = 0; vkEnumerateInstanceLayerProperties(&nl, 0);
        VkLayerProperties lp[64]; if (nl > 64) nl = 64; vkEnumerateInstanceLayerProperties(&nl, lp);
        bool found = false;
        for (u32 i = 0; i < nl; i++) if (!strcmp(lp[i].layerName, "VK_LAYER_KHRONOS_validation")) found = true;
        if (!found) return err_set(e, EXIT_DEVICE, "EDGE_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers)");
        layers[n_layers++] = "VK_LAYER_KHRONOS_validation";
        dbg = true;   /* the layer provides VK_EXT_debug_utils */
    } else if (has_ext(iext, n, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) && edge_opt.debug_names) dbg = true;
    if (dbg) exts[n_exts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;

    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, 0, "edge", 1, "edge", 1, api };
    VkDebugUtilsMessengerCreateInfoEXT mci = { VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT, 0, 0,
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
        VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT, vk_debug_cb, 0 };
    VkInstanceCreateInfo ici = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, want_val ? &mci : 0, 0, &app,
                                 n_layers, layers, n_exts, exts };
    VkResult r = vkCreateInstance(&ici, 0, &vk->instance);
    if (r != VK_SUCCESS) return err_set(e, EXIT_DEVICE, "vkCreateInstance failed: %s (no usable Vulkan driver?)", vk_result_name(r));
#define VK_LOAD_I(f) f = (PFN_##f)vkGetInstanceProcAddr_(vk->instance, #f); if (!f) return err_set(e, EXIT_DEVICE, "Vulkan instance lacks %s (Vulkan 1.1 is required)", #f);
    VK_INSTANCE_FUNCS(VK_LOAD_I)
    if (dbg) {
        vkCreateDebugUtilsMessengerEXT_  = (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr_(vk->instance, "vkCreateDebugUtilsMessengerEXT");
        vkDestroyDebugUtilsMessengerEXT_ = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr_(vk->instance, "vkDestroyDebugUtilsMessengerEXT");
        vkSetDebugUtilsObjectNameEXT_    = (PFN_vkSetDebugUtilsObjectNameEXT)vkGetInstanceProcAddr_(vk->instance, "vkSetDebugUtilsObjectNameEXT");
        if (want_val && vkCreateDebugUtilsMessengerEXT_) VK_CHECK(vkCreateDebugUtilsMessengerEXT_(vk->instance, &mci, 0, &vk->messenger));
    }
    return true;
}

/* The physical device: EDGE_DEVICE=N (--device N), else the first GPU, else the first device;
   its properties and memory; Vulkan 1.1 at least. */
static bool vk_pick_device(Vk *vk, Err *e) {
    u32 nd = 0; vkEnumeratePhysicalDevices(vk->instance, &nd, 0);
    if (nd == 0) return err_set(e, EXIT_DEVICE, "no Vulkan device found (the loader found no driver)");
    VkPhysicalDevice pds[16]; if (nd > 16) nd = 16; vkEnumeratePhysicalDevices(vk->instance, &nd, pds);
    const char *dev = edge_opt.device;
    u32 pick = 0;
    if (dev) {
        char *end; long v = strtol(dev, &end, 10);
        if (*end || v < 0 || (u32)v >= nd) return err_set(e, EXIT_DEVICE, "EDGE_DEVICE=%s: no such device (found %u)", dev, nd);
        pick = (u32)v;
    } else {
        for (u32 i = 0; i < nd; i++) {
            VkPhysicalDeviceProperties p; vkGetPhysicalDeviceProperties(pds[i], &p);
            if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU || p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) { pick = i; break; }
        }
    }
    vk->phys = pds[pick];
    vkGetPhysicalDeviceProperties(vk->phys, &vk->props);
    vkGetPhysicalDeviceMemoryProperties(vk->phys, &vk->mem);
    if (vk->props.apiVersion < VK_API_VERSION_1_1)
        return err_set(e, EXIT_DEVICE, "device '%s' supports Vulkan %u.%u; edge needs 1.1", vk->props.deviceName,
                       VK_API_VERSION_MAJOR(vk->props.apiVersion), VK_API_VERSION_MINOR(vk->props.apiVersion));
    return true;
}

/* The optional features the device reports (f16 and int8 arithmetic, 16-bit storage, cooperative
   matrices, integer dot products), less what EDGE_NO_IDOT / EDGE_NO_COOPMAT turn off. caps.idot:
   the int8 lanes are used (accelerated, or EDGE_IDOT=1); caps.idot_ok: they could be. */
static VkWant vk_query_features(Vk *vk, const VkExtensionProperties *dext, u32 ne, u32 subgroup_size) {
    VkPhysicalDeviceShaderFloat16Int8Features f16i8 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, 0, 0, 0 };
    VkPhysicalDevice16BitStorageFeatures s16 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, 0, 0, 0, 0, 0 };
    bool f16_ext = vk->props.apiVersion >= VK_API_VERSION_1_2 || has_ext(dext, ne, "VK_KHR_shader_float16_int8");
    if (f16_ext) s16.pNext = &f16i8;
    EdgeCoopMatFeatures cmf = { EDGE_STYPE_COOPMAT_FEATURES, 0, 0, 0 };
    VkPhysicalDeviceVulkanMemoryModelFeatures vmm = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, 0, 0, 0, 0 };
    bool cm_ext = has_ext(dext, ne, "VK_KHR_cooperative_matrix") && has_ext(dext, ne, "VK_KHR_vulkan_memory_model");
    if (cm_ext) { vmm.pNext = s16.pNext; cmf.pNext = &vmm; s16.pNext = &cmf; }
    /* integer dot products: VK_KHR_shader_integer_dot_product, enabled on the device where listed (its
       promotion to Vulkan 1.3 does not count: the instance asks for 1.2 at most, and the SPIR-V
       extension needs the device extension then); used where the driver says signed 4x8-bit packed
       dot products are accelerated */
    VkPhysicalDeviceShaderIntegerDotProductFeatures idf = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES, 0, 0 };
    VkPhysicalDeviceShaderIntegerDotProductProperties idp; memset(&idp, 0, sizeof idp); idp.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES;
    bool id_ext = has_ext(dext, ne, "VK_KHR_shader_integer_dot_product");
    if (id_ext) {
        idf.pNext = s16.pNext; s16.pNext = &idf;
        VkPhysicalDeviceProperties2 p4 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &idp, {0} };
        vkGetPhysicalDeviceProperties2(vk->phys, &p4);
    }
    VkPhysicalDeviceFeatures2 f2 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &s16, {0} };
    vkGetPhysicalDeviceFeatures2(vk->phys, &f2);
    VkWant w;
    w.f16 = f16_ext && f16i8.shaderFloat16;
    w.s16 = s16.storageBuffer16BitAccess;
    w.i8  = f16_ext && f16i8.shaderInt8;
    w.id  = id_ext && idf.shaderIntegerDotProduct && !edge_opt.no_idot;
    w.cm  = cm_ext && cmf.cooperativeMatrix && vmm.vulkanMemoryModel && vmm.vulkanMemoryModelDeviceScope && w.f16 && w.s16 &&
            subgroup_size == 32 && vk_coopmat_16(vk) && !edge_opt.no_coopmat;
    vk->caps.idot    = w.id && (idp.integerDotProduct4x8BitPackedSignedAccelerated || edge_opt.idot);   /* EDGE_IDOT=1: also unaccelerated (tests) */
    vk->caps.idot_ok = w.id;
    return w;
}

/* vk->caps from the device's properties and features, then the options (EDGE_FENCE_SPIN_US,
   EDGE_FENCE_TIMEOUT_MS, EDGE_MAX_BINDING) and the profile (EDGE_PROFILE), which only removes:
   what it removes is not enabled on the device. */
static VkWant vk_query_caps(Vk *vk, const DevProfile *prof, const VkExtensionProperties *dext, u32 ne) {
    /* properties: subgroups, driver */
    VkPhysicalDeviceSubgroupProperties sub = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, 0, 0, 0, 0, 0 };
    VkPhysicalDeviceDriverProperties drv = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, 0, 0, "", "", {0, 0, 0, 0} };
    bool has_drv = vk->props.apiVersion >= VK_API_VERSION_1_2 || has_ext(dext, ne, "VK_KHR_driver_properties");
    if (has_drv) sub.pNext = &drv;
    /* the number of compute units, where the driver tells it (NVIDIA SMs, Arm Mali shader cores) */
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV, 0, 0, 0 };
    VkPhysicalDeviceShaderCoreBuiltinsPropertiesARM cores = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_BUILTINS_PROPERTIES_ARM, 0, 0, 0, 0 };
    bool has_sm = has_ext(dext, ne, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME), has_cores = has_ext(dext, ne, VK_ARM_SHADER_CORE_BUILTINS_EXTENSION_NAME);
    if (has_sm) { sm.pNext = sub.pNext; sub.pNext = &sm; }
    if (has_cores) { cores.pNext = sub.pNext; sub.pNext = &cores; }
    VkPhysicalDeviceProperties2 p2 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sub, {0} };
    vkGetPhysicalDeviceProperties2(vk->phys, &p2);
    if (has_drv) { fmt_buf(vk->driver_name, sizeof vk->driver_name, "%s", drv.driverName); fmt_buf(vk->driver_info, sizeof vk->driver_info, "%s", drv.driverInfo); }

    VkWant w = vk_query_features(vk, dext, ne, sub.subgroupSize);
    VkCaps *c = &vk->caps;
    c->api_version        = vk->props.apiVersion;
    c->subgroup_size      = sub.subgroupSize;
    c->subgroup_ops       = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? sub.supportedOperations : 0;
    c->f16_arith          = w.f16;
    c->storage16          = w.s16;
    c->int8_arith         = w.i8;
    c->coopmat            = w.cm;
    c->timestamps         = vk->props.limits.timestampComputeAndGraphics;
    c->timestamp_period_ns = vk->props.limits.timestampPeriod;
    c->max_storage_range  = vk->props.limits.maxStorageBufferRange;
    c->min_offset_align   = MAX(vk->props.limits.minStorageBufferOffsetAlignment, 4);
    c->max_shared         = vk->props.limits.maxComputeSharedMemorySize;
    c->max_wg_invocations = vk->props.limits.maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; i++) c->max_wg_size[i] = vk->props.limits.maxComputeWorkGroupSize[i];
    c->max_push           = vk->props.limits.maxPushConstantsSize;
    c->compute_units      = has_sm ? sm.shaderSMCount : has_cores ? cores.shaderCoreCount : 0;
    VkPhysicalDeviceMaintenance3Properties m3 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES, 0, 0, 0 };
    VkPhysicalDeviceProperties2 p3 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &m3, {0} };
    vkGetPhysicalDeviceProperties2(vk->phys, &p3);
    c->max_alloc = m3.maxMemoryAllocationSize ? m3.maxMemoryAllocationSize : ((u64)1 << 30);
    vk->fence_timeout_ns = EDGE_VK_FENCE_TIMEOUT_NS;
    vk->spin_ns = vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 0 : EDGE_VK_SPIN_NS;
    if (edge_opt.fence_spin_us.set) vk->spin_ns = (u64)edge_opt.fence_spin_us.v * 1000ull;   /* 0: always sleep in vkWaitForFences */
    if (edge_opt.fence_timeout_ms.set) {                                                     /* emulators (qemu) and soak tests */
        u64 v = (u64)edge_opt.fence_timeout_ms.v;
        if (v > 0) vk->fence_timeout_ns = v * 1000000ull;
    }
    if (edge_opt.max_binding.set) {
        u64 v = (u64)edge_opt.max_binding.v;
        if (v >= 256 && v < c->max_storage_range) c->max_storage_range = v & ~(u64)15;
    }
    if (prof) {                         /* the profile removes; what it removes is not enabled on the device */
        vk_profile_apply(c, prof);
        w.f16 = c->f16_arith; w.s16 = c->storage16; w.cm = c->coopmat; w.id = c->idot_ok;
    }
    for (u32 i = 0; i < vk->mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags fl = vk->mem.memoryTypes[i].propertyFlags, want =
            VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        if ((fl & want) == want) c->unified = true;
    }
    return w;
}

/* The queue family: one with compute, compute-only preferred; its timestamp bits. */
static bool vk_pick_queue(Vk *vk, Err *e) {
    VkCaps *c = &vk->caps;
    u32 nq = 0; vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &nq, 0);
    VkQueueFamilyProperties qf[16]; if (nq > 16) nq = 16; vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &nq, qf);
    vk->qfam = ~0u;
    for (u32 i = 0; i < nq; i++) if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        if (vk->qfam == ~0u || !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) vk->qfam = i;   /* prefer compute-only */
        if (!(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) break;
    }
    if (vk->qfam == ~0u) return err_set(e, EXIT_DEVICE, "device '%s' has no compute queue", vk->props.deviceName);
    if (!(qf[vk->qfam].timestampValidBits)) c->timestamps = false;
    u32 tb = qf[vk->qfam].timestampValidBits;
    c->timestamp_mask = tb >= 64 ? ~0ull : tb ? (1ull << tb) - 1 : 0;
    return true;
}

/* The device with the wanted features and their extensions, its functions and queue. */
static bool vk_create_device(Vk *vk, VkWant w, const VkExtensionProperties *dext, u32 ne, Err *e) {
    f32 prio = 1.0f;
    VkDeviceQueueCreateInfo qci = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, vk->qfam, 1, &prio };
    VkPhysicalDeviceShaderFloat16Int8Features en_f16 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, 0, w.f16, w.i8 };
    VkPhysicalDevice16BitStorageFeatures en_s16 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, 0, w.s16, 0, 0, 0 };
    void *chain = 0;
    if (w.s16) { en_s16.pNext = chain; chain = &en_s16; }
    if (w.f16 || w.i8) { en_f16.pNext = chain; chain = &en_f16; }
    EdgeCoopMatFeatures en_cm = { EDGE_STYPE_COOPMAT_FEATURES, 0, VK_TRUE, VK_FALSE };
    VkPhysicalDeviceVulkanMemoryModelFeatures en_vmm = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, 0, VK_TRUE, VK_TRUE, VK_FALSE };
    if (w.cm) { en_vmm.pNext = chain; en_cm.pNext = &en_vmm; chain = &en_cm; }
    VkPhysicalDeviceShaderIntegerDotProductFeatures en_id = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES, 0, VK_TRUE };
    if (w.id) { en_id.pNext = chain; chain = &en_id; }
    const char *dexts[6]; u32 n_dexts = 0;
    if (w.id) dexts[n_dexts++] = "VK_KHR_shader_integer_dot_product";
    if (w.cm) { dexts[n_dexts++] = "VK_KHR_cooperative_matrix"; dexts[n_dexts++] = "VK_KHR_vulkan_memory_model"; }
    if ((w.f16 || w.i8) && vk->props.apiVersion < VK_API_VERSION_1_2) dexts[n_dexts++] = "VK_KHR_shader_float16_int8";
    /* EDGE_PIPE_STATS=1: the driver's statistics of every pipeline (registers, spills, ...) on stderr,
       where it offers VK_KHR_pipeline_executable_properties */
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR en_pe = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR, 0, 1 };
    if (edge_opt.pipe_stats && has_ext(dext, ne, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
        dexts[n_dexts++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        en_pe.pNext = chain; chain = &en_pe;
        vk->pipe_stats = true;
    }
    VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, chain, 0, 1, &qci, 0, 0, n_dexts, dexts, 0 };
    VkResult r = vkCreateDevice(vk->phys, &dci, 0, &vk->dev);
    if (r != VK_SUCCESS) return err_set(e, EXIT_DEVICE, "vkCreateDevice failed on '%s': %s", vk->props.deviceName, vk_result_name(r));
#define VK_LOAD_D(f) f = (PFN_##f)vkGetDeviceProcAddr(vk->dev, #f); if (!f) return err_set(e, EXIT_DEVICE, "Vulkan device lacks %s", #f);
    VK_DEVICE_FUNCS(VK_LOAD_D)
    if (vk->pipe_stats) {
        vkGetPipelineExecutablePropertiesKHR_ = (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(vk->dev, "vkGetPipelineExecutablePropertiesKHR");
        vkGetPipelineExecutableStatisticsKHR_ = (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(vk->dev, "vkGetPipelineExecutableStatisticsKHR");
        if (!vkGetPipelineExecutablePropertiesKHR_ || !vkGetPipelineExecutableStatisticsKHR_) vk->pipe_stats = false;
    }
    vkGetDeviceQueue(vk->dev, vk->qfam, 0, &vk->queue);
    return true;
}

/* A vk_init that failed after loading the loader: what it made so far goes (device, messenger, instance,
   the library; each destroy function was loaded first of its list, so it is there when its object is),
   and vk is zero again, as vk_shutdown leaves it. */
static bool vk_init_undo(Vk *vk) {
    if (vk->dev && vkDestroyDevice) vkDestroyDevice(vk->dev, 0);
    if (vk->messenger && vkDestroyDebugUtilsMessengerEXT_) vkDestroyDebugUtilsMessengerEXT_(vk->instance, vk->messenger, 0);
    if (vk->instance && vkDestroyInstance) vkDestroyInstance(vk->instance, 0);
    if (vk->lib) dlclose(vk->lib);
    memset(vk, 0, sizeof *vk);
    return false;
}

bool vk_init(Vk *vk, Err *e) {
    memset(vk, 0, sizeof *vk);
    if (!vk_fault_parse(e)) return false;
    const DevProfile *prof = 0;
    if (edge_opt.profile && !(prof = vk_profile_find(edge_opt.profile))) {
        char names[256]; vk_profile_names(names, sizeof names);
        return err_set(e, EXIT_DEVICE, "EDGE_PROFILE=%s: unknown device profile (valid: %s)", edge_opt.profile, names);
    }
    if (!vk_load_loader(vk, e) || !vk_create_instance(vk, e) || !vk_pick_device(vk, e)) return vk_init_undo(vk);
    u32 ne = 0; vkEnumerateDeviceExtensionProperties(vk->phys, 0, &ne, 0);
    VkExtensionProperties *dext = calloc(ne ? ne : 1, sizeof *dext);
    vkEnumerateDeviceExtensionProperties(vk->phys, 0, &ne, dext);
    VkWant want = vk_query_caps(vk, prof, dext, ne);
    bool ok = vk_pick_queue(vk, e) && vk_create_device(vk, want, dext, ne, e);
    free(dext);
    if (!ok) return vk_init_undo(vk);

    VkCommandPoolCreateInfo cpi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, 0, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, vk->qfam };
    VK_CHECK(vkCreateCommandPool(vk->dev, &cpi, 0, &vk->pool));
    VkCommandBufferAllocateInfo cai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, 0, vk->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
    VK_CHECK(vkAllocateCommandBuffers(vk->dev, &cai, &vk->cmd));
    VK_CHECK(vkAllocateCommandBuffers(vk->dev, &cai, &vk->copy_cmd));
    VkFenceCreateInfo fci = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, 0, 0 };
    VK_CHECK(vkCreateFence(vk->dev, &fci, 0, &vk->fence));
    vk->dpool = vk_make_pool(vk, EDGE_VK_MAX_SETS, EDGE_VK_MAX_SETS * 8);
    vk_pcache_open(vk);
    return true;
}

static void vk_block_free(Vk *vk, VkBlock *b) {
    if (b->mapped) vkUnmapMemory(vk->dev, b->mem);
    if (b->buf) vkDestroyBuffer(vk->dev, b->buf, 0);
    if (b->mem) vkFreeMemory(vk->dev, b->mem, 0);
    memset(b, 0, sizeof *b);
}

void vk_shutdown(Vk *vk) {
    if (vk->dev) {
        vkDeviceWaitIdle(vk->dev);
        for (u32 i = 0; i < ARRAY_COUNT(vk->pipes); i++) {
            VkPipe *p = &vk->pipes[i];
            if (p->pipe) vkDestroyPipeline(vk->dev, p->pipe, 0);
            if (p->layout) vkDestroyPipelineLayout(vk->dev, p->layout, 0);
            if (p->dsl) vkDestroyDescriptorSetLayout(vk->dev, p->dsl, 0);
        }
        vk_pcache_save(vk);
        vk_block_free(vk, &vk->staging);
        vkDestroyDescriptorPool(vk->dev, vk->dpool, 0);
        vkDestroyFence(vk->dev, vk->fence, 0);
        vkDestroyCommandPool(vk->dev, vk->pool, 0);
        vkDestroyDevice(vk->dev, 0);
    }
    if (vk->messenger && vkDestroyDebugUtilsMessengerEXT_) vkDestroyDebugUtilsMessengerEXT_(vk->instance, vk->messenger, 0);
    if (vk->instance) vkDestroyInstance(vk->instance, 0);
    if (vk->lib) dlclose(vk->lib);
    memset(vk, 0, sizeof *vk);
}

/* ---- memory -------------------------------------------------------------------- */
static bool vk_block_alloc(Vk *vk, VkBlock *b, u64 size, bool host, const char *name, Err *e) {
    memset(b, 0, sizeof *b);
    VkBufferCreateInfo bci = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, 0, 0, size,
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        VK_SHARING_MODE_EXCLUSIVE, 0, 0 };
    VkResult r = vkCreateBuffer(vk->dev, &bci, 0, &b->buf);
    if (r != VK_SUCCESS) return err_set(e, EXIT_DEVICE, "device arena '%s': vkCreateBuffer(%llu bytes) failed: %s", name, (unsigned long long)size, vk_result_name(r));
    VkMemoryRequirements req; vkGetBufferMemoryRequirements(vk->dev, b->buf, &req);
    /* prefer device-local + host-visible (unified), then device-local (staging copies), for host: host-visible coherent */
    const VkMemoryPropertyFlags HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags prefs[3] = { VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | HV, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, HV };
    if (host) { prefs[0] = HV | VK_MEMORY_PROPERTY_HOST_CACHED_BIT; prefs[1] = HV; }   /* staging: CPU reads must be cached */
    u32 type = ~0u;
    for (int p = 0; p < 3 && type == ~0u; p++)
        for (u32 i = 0; i < vk->mem.memoryTypeCount; i++)
            if ((req.memoryTypeBits & (1u << i)) && (vk->mem.memoryTypes[i].propertyFlags & prefs[p]) == prefs[p]) { type = i; break; }
    if (type == ~0u) { vk_block_free(vk, b); return err_set(e, EXIT_DEVICE, "device arena '%s': no suitable memory type", name); }
    VkMemoryAllocateInfo mai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, 0, req.size, type };
    r = vk_fault_hit(VKF_ALLOC_FAIL) ? VK_ERROR_OUT_OF_DEVICE_MEMORY : vkAllocateMemory(vk->dev, &mai, 0, &b->mem);
    if (r != VK_SUCCESS) {
        vk_block_free(vk, b);
        return err_set(e, EXIT_DEVICE, "device arena '%s': cannot allocate %llu bytes of device memory: %s", name, (unsigned long long)req.size, vk_result_name(r));
    }
    VK_CHECK(vkBindBufferMemory(vk->dev, b->buf, b->mem, 0));
    b->size = size;
    if (vk->mem.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
        VK_CHECK(vkMapMemory(vk->dev, b->mem, 0, VK_WHOLE_SIZE, 0, (void **)&b->mapped));
    b->cached = (vk->mem.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
    vk_name(vk, VK_OBJECT_TYPE_BUFFER, (u64)b->buf, name);
    return true;
}

bool vk_arena_init(Vk *vk, DevArena *a, const char *name, u64 bytes, Err *e) {
    memset(a, 0, sizeof *a);
    a->name = name; a->vk = vk;
    u64 left = bytes ? bytes : 16;
    u64 max_block = vk->caps.max_alloc;
    while (left) {
        if (a->n_blocks == ARRAY_COUNT(a->blocks)) return err_set(e, EXIT_DEVICE, "device arena '%s': %llu bytes need more than %u blocks of %llu", name, (unsigned long long)bytes, (u32)ARRAY_COUNT(a->blocks), (unsigned long long)max_block);
        u64 sz = MIN(left, max_block);
        if (!vk_block_alloc(vk, &a->blocks[a->n_blocks], sz, false, name, e)) { vk_arena_free(a); return false; }
        a->n_blocks++; a->cap += sz; left -= sz;
    }
    return true;
}

void vk_arena_free(DevArena *a) {
    if (!a->planning) for (u32 i = 0; i < a->n_blocks; i++) vk_block_free(a->vk, &a->blocks[i]);
    a->n_blocks = 0; a->cap = a->pos = a->used = 0; a->cur = 0;
}

void vk_arena_plan(Vk *vk, DevArena *a, const char *name) {
    memset(a, 0, sizeof *a);
    a->name = name; a->vk = vk; a->planning = true;
    a->n_blocks = ARRAY_COUNT(a->blocks);
    a->cap = vk->caps.max_alloc * a->n_blocks;
}

/* The same block-filling walk as vk_tensor_at: full blocks of max_alloc, then the last one's fill. */
u64 vk_arena_plan_bytes(const DevArena *a) { return (u64)a->cur * a->vk->caps.max_alloc + a->pos; }

static u64 vk_block_cap(const DevArena *a, u32 i) { return a->planning ? a->vk->caps.max_alloc : a->blocks[i].size; }

u64 dtype_bytes(DType t, u64 n) {
    if ((u32)t >= DT_COUNT) return 0;
    const DTypeInfo *d = &dtype_info[t];
    return n % d->blk ? 0 : n / d->blk * d->bytes;
}

Tensor vk_tensor_at(DevArena *a, const char *name, DType t, u32 ndim, const u64 *ne, const char *site) {
    Tensor x; memset(&x, 0, sizeof x);
    x.name = name; x.dtype = t; x.ndim = ndim; x.arena = a; x.nelem = 1;
    for (u32 i = 0; i < 4; i++) { x.ne[i] = i < ndim ? ne[i] : 1; if (!mul_u64(x.nelem, x.ne[i], &x.nelem)) die(EXIT_USAGE, "tensor '%s': element count overflows, at %s", name, site); }
    x.nbytes = dtype_bytes(t, x.nelem);
    if (!x.nbytes) die(EXIT_USAGE, "tensor '%s': %llu elements are not whole %s blocks, at %s", name, (unsigned long long)x.nelem, dtype_name[t], site);
    u64 al = MAX(MAX(a->vk->caps.min_offset_align, 16), a->align);
    for (;;) {
        if (a->cur >= a->n_blocks) break;
        u64 start = align_up(a->pos, al);
        if (start + align_up(x.nbytes, 16) <= vk_block_cap(a, a->cur)) {
            /* the reservation starts and ends on 16 bytes: weight views are bound rounded up to 16
               bytes (matmul.wgsl reads them as 16-byte vectors; ops_matmul.c wq_view) */
            x.block = a->cur; x.offset = start; a->pos = start + align_up(x.nbytes, 16); a->used += x.nbytes;
            if (a->on_tensor) a->on_tensor(a->on_ctx, &x);
            return x;
        }
        a->cur++; a->pos = 0;
    }
    die(EXIT_DEVICE, "device arena '%s' exhausted: tensor '%s' asked for %llu bytes, used %llu of %llu, at %s",
        a->name, name, (unsigned long long)x.nbytes, (unsigned long long)a->used, (unsigned long long)a->cap, site);
}

/* Keeps a group of n tensors that are about to be placed back to back (bytes: the sum of their sizes,
   each rounded to 16) in one block: when the group would not fit the rest of the current block but
   fits an empty one, the next reservation starts the next block. A product binds such a group as one
   view (op_concat_rows: q|k|v, gate|up), which a block boundary between its tensors would split into
   two dispatches (llama-3.1-8b: one layer's gate and up on the H200, 61 us of the token instead of 30).
   The same walk in a planning arena, so the plan stays exact. */
void vk_arena_keep(DevArena *a, u64 bytes, u32 n) {
    if (a->cur + 1 >= a->n_blocks || !a->pos) return;
    u64 al = MAX(MAX(a->vk->caps.min_offset_align, 16), a->align), need = bytes + n * al;   /* (each start aligned) */
    if (align_up(a->pos, al) + need > vk_block_cap(a, a->cur) && need <= a->vk->caps.max_alloc) { a->cur++; a->pos = 0; }
}

/* A weight tensor (the matmul and get_rows products' W): a regrouped type's (up other than COPY) bytes lie
   in units on the device. Other tensors of the same dtype (a q8_0 KV cache) keep their own layout. */
Tensor vk_weight_at(DevArena *a, const char *name, DType t, u32 ndim, const u64 *ne, const char *site) {
    Tensor x = vk_tensor_at(a, name, t, ndim, ne, site);
    x.units = dtype_info[t].up != DU_COPY;
    return x;
}

/* Q6_K and the group types' weights on the device (the up column of config/dtypes.def): nb blocks
   regrouped in units of 8, the last unit of fewer when nb is not a multiple of 8. A unit of n blocks
   holds each part of its blocks in turn, in its same bytes: Q6_K (210 bytes) their ql[128], then
   qh[64], scales[16] and d[2]; a group type (G2..G8: Q8_0 Q4_0 IQ4_NL, Q4_1, Q5_0, Q5_1 IQ4_XS) its
   quants (the bytes after the header), then its headers of 2, 4, 6 or 8 bytes (d; d, m; d, qh; d, m,
   qh / d, scales). So the quants start on a 16-byte boundary and the kernels read them in 16-byte
   vectors (common/q6a.wgsl: q6a, gu). pack: GGUF order to units; else back. Units are local: a range
   of whole units converts on its own. */
typedef struct UnitParts { u32 n; u32 off[4], len[4]; } UnitParts;   /* GGUF offset, length of each part in unit order */
static UnitParts unit_parts(DType dt) {
    const DTypeInfo *d = &dtype_info[dt];
    if (d->up == DU_Q6K) return (UnitParts){ 4, { 0, 128, 192, 208 }, { 128, 64, 16, 2 } };
    u32 hb = d->up == DU_G2 ? 2 : d->up == DU_G4 ? 4 : d->up == DU_G6 ? 6 : 8;
    return (UnitParts){ 2, { hb, 0 }, { d->bytes - hb, hb } };
}
void vk_units(DType dt, u8 *dst, const u8 *src, u64 nb, bool pack) {
    UnitParts up = unit_parts(dt);
    u64 bb = dtype_info[dt].bytes;
    for (u64 u0 = 0; u0 < nb; u0 += 8) {
        u64 n = MIN(8, nb - u0);
        const u8 *s = src + u0 * bb; u8 *d = dst + u0 * bb;
        for (u64 j = 0, before = 0; j < n; j++, before = 0)
            for (u32 q = 0; q < up.n; before += up.len[q++]) {
                u64 g = j * bb + up.off[q], r = before * n + up.len[q] * j;   /* GGUF, unit offsets */
                if (pack) memcpy(d + r, s + g, up.len[q]); else memcpy(d + g, s + r, up.len[q]);
            }
    }
}

/* host <-> device bytes of t: a copy, or a weight's regrouping (n bytes: whole blocks) */
static void vk_xfer(const Tensor *t, u8 *dst, const u8 *src, u64 n, bool up) {
    if (t->units) vk_units(t->dtype, dst, src, n / dtype_info[t->dtype].bytes, up);
    else memcpy(dst, src, n);
}

/* Copies between host and a tensor, exactly t->nbytes, through the staging block when needed.
   A weight in units is regrouped on the way (vk_units): through staging, in whole units. */
static void vk_copy(Vk *vk, const Tensor *t, void *host, bool up) {
    VkBlock *b = &t->arena->blocks[t->block];
    /* mapped memory that the CPU does not cache (a discrete GPU's BAR window) is fine to write
       but very slow to read: larger downloads from it go through the cached staging block */
    if (b->mapped && (up || b->cached || t->nbytes <= EDGE_VK_UNCACHED_READ_MAX)) {
        if (up) vk_xfer(t, b->mapped + t->offset, host, t->nbytes, true);
        else    vk_xfer(t, host, b->mapped + t->offset, t->nbytes, false);
        return;
    }
    if (!vk->staging.buf) {
        Err e;
        if (!vk_block_alloc(vk, &vk->staging, EDGE_VK_STAGING_BYTES, true, "staging", &e)) die(e.code, "%s", e.msg);
    }
    u64 unit = 8 * (u64)dtype_info[t->dtype].bytes, step = t->units ? vk->staging.size / unit * unit : vk->staging.size;
    for (u64 done = 0; done < t->nbytes;) {
        u64 n = MIN(t->nbytes - done, step);
        if (up) vk_xfer(t, vk->staging.mapped, (u8 *)host + done, n, true);
        VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, 0, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, 0 };
        VK_CHECK(vkBeginCommandBuffer(vk->copy_cmd, &bi));
        VkBufferCopy c = up ? (VkBufferCopy){ 0, t->offset + done, n } : (VkBufferCopy){ t->offset + done, 0, n };
        if (up) vkCmdCopyBuffer(vk->copy_cmd, vk->staging.buf, b->buf, 1, &c);
        else    vkCmdCopyBuffer(vk->copy_cmd, b->buf, vk->staging.buf, 1, &c);
        VK_CHECK(vkEndCommandBuffer(vk->copy_cmd));
        VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, 0, 0, 0, 0, 1, &vk->copy_cmd, 0, 0 };
        VK_CHECK(vkQueueSubmit(vk->queue, 1, &si, vk->fence));
        VkResult r = vk_wait(vk);
        if (r != VK_SUCCESS) vk_wait_failed(vk, r);
        VK_CHECK(vkResetFences(vk->dev, 1, &vk->fence));
        if (!up) vk_xfer(t, (u8 *)host + done, vk->staging.mapped, n, false);
        done += n;
    }
}

void vk_upload(Vk *vk, const Tensor *t, const void *src) { vk_copy(vk, t, (void *)src, true); }
void vk_download(Vk *vk, const Tensor *t, void *dst) { vk_copy(vk, t, dst, false); }

/* ---- pipelines ----------------------------------------------------------------- */
i32 vk_kernel_find(const char *name) {
    for (i32 i = 0; i < KERNEL_TABLE_COUNT; i++) if (!strcmp(kernel_table[i].name, name)) return i;
    return -1;
}

/* Everything a kernel needs from the device, against the (possibly profile-restricted) caps. The
   runtime picks variants with this; vk_pipeline refuses what it rejects. */
bool vk_kernel_check(const VkCaps *c, const KernelInfo *k, Err *e) {
    char who[96];
    fmt_buf(who, sizeof who, "%s%s%s", c->profile ? " (profile " : "", c->profile ? c->profile : "", c->profile ? ")" : "");
    const char *dev = c->profile ? "the device" : "this device";
    if (k->cap_f16 && !c->f16_arith)
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) needs shaderFloat16 (f16 arithmetic), which %s%s lacks", k->name, k->file, dev, who);
    if (k->cap_idot && !c->idot_ok)
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) needs integer dot products (shaderIntegerDotProduct), which %s%s lacks", k->name, k->file, dev, who);
    if (k->cap_coopmat && !c->coopmat)
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) needs cooperative matrices (16x16x16 f16, subgroups of 32) and the Vulkan memory model, which %s%s lacks",
                       k->name, k->file, dev, who);
    if (k->cap_s16 && !c->storage16)
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) needs storageBuffer16BitAccess (16-bit storage), which %s%s lacks", k->name, k->file, dev, who);
    if (k->cap_subgroup && !(c->subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT))
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) needs subgroup operations, which %s%s lacks", k->name, k->file, dev, who);
    if (k->cap_sub_arith && !(c->subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT))
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) needs subgroup arithmetic, which %s%s lacks", k->name, k->file, dev, who);
    if (k->cap_sub_ballot && !(c->subgroup_ops & VK_SUBGROUP_FEATURE_BALLOT_BIT))
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) needs subgroup ballot, which %s%s lacks", k->name, k->file, dev, who);
    if (k->cap_sub_shuffle && !(c->subgroup_ops & (VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT)))
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) needs subgroup shuffle, which %s%s lacks", k->name, k->file, dev, who);
    u64 inv = (u64)k->wg[0] * k->wg[1] * k->wg[2];
    if (inv > c->max_wg_invocations)
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) has a workgroup of %llu invocations (%ux%ux%u); %s%s allows %u (maxComputeWorkGroupInvocations)",
                       k->name, k->file, (unsigned long long)inv, k->wg[0], k->wg[1], k->wg[2], dev, who, c->max_wg_invocations);
    for (int i = 0; i < 3; i++)
        if (k->wg[i] > c->max_wg_size[i])
            return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) has workgroup size %u in dimension %d; %s%s allows %u (maxComputeWorkGroupSize)",
                           k->name, k->file, k->wg[i], i, dev, who, c->max_wg_size[i]);
    if (k->shared_bytes > c->max_shared)
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) uses %u bytes of workgroup memory; %s%s allows %u (maxComputeSharedMemorySize)",
                       k->name, k->file, k->shared_bytes, dev, who, c->max_shared);
    if (k->push_size > c->max_push)
        return err_set(e, EXIT_DEVICE, "kernel '%s' (%s) needs %u push-constant bytes; %s%s allows %u", k->name, k->file, k->push_size, dev, who, c->max_push);
    return true;
}


/* EDGE_PIPE_STATS=1: one stderr line per pipeline with the driver's statistics (what a
   driver reports varies: NVIDIA gives registers per thread, spills and the binary size). */
static void vk_pipe_stats(Vk *vk, VkPipe *p) {
    VkPipelineInfoKHR pi = { VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, 0, p->pipe };
    VkPipelineExecutablePropertiesKHR ep[4]; u32 ne = 4;
    for (u32 i = 0; i < 4; i++) ep[i] = (VkPipelineExecutablePropertiesKHR){ .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR };
    if (vkGetPipelineExecutablePropertiesKHR_(vk->dev, &pi, &ne, ep) < 0) return;
    for (u32 x = 0; x < ne; x++) {
        VkPipelineExecutableInfoKHR ei = { VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, 0, p->pipe, x };
        VkPipelineExecutableStatisticKHR st[32]; u32 ns = 32;
        for (u32 i = 0; i < 32; i++) st[i] = (VkPipelineExecutableStatisticKHR){ .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR };
        if (vkGetPipelineExecutableStatisticsKHR_(vk->dev, &ei, &ns, st) < 0) continue;
        char line[1024]; u32 at = 0;
        for (u32 i = 0; i < ns && at < sizeof line - 80; i++) {
            const VkPipelineExecutableStatisticKHR *t = &st[i];
            if (t->format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR) at += (u32)fmt_buf(line + at, sizeof line - at, " %s=%u", t->name, t->value.b32);
            else if (t->format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR) at += (u32)fmt_buf(line + at, sizeof line - at, " %s=%lld", t->name, (long long)t->value.i64);
            else if (t->format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR) at += (u32)fmt_buf(line + at, sizeof line - at, " %s=%llu", t->name, (unsigned long long)t->value.u64);
            else at += (u32)fmt_buf(line + at, sizeof line - at, " %s=%g", t->name, t->value.f64);
        }
        errf("edge: pipeline stats %s [%s]:%s\n", p->k->name, ep[x].name, line);
    }
}

VkPipe *vk_pipeline(Vk *vk, i32 ki) {
    if (ki < 0 || ki >= KERNEL_TABLE_COUNT) die(EXIT_USAGE, "vk_pipeline: kernel index %d out of range (%d kernels)", ki, KERNEL_TABLE_COUNT);
    VkPipe *p = &vk->pipes[ki];
    const KernelInfo *k = &kernel_table[ki];
    Err e;
    if (!vk_kernel_check(&vk->caps, k, &e)) die(e.code, "%s", e.msg);   /* before the cache: caps are the truth */
    if (p->pipe) return p;
    p->k = k;
    if (vk->describe) return p;         /* describe mode: the signature only, no pipeline */
    vk->n_pipelines++;
    VkDescriptorSetLayoutBinding lb[16];
    for (u32 i = 0; i < k->n_bindings; i++) {
        if (k->bindings[i].set != 0) die(EXIT_USAGE, "kernel '%s': binding in set %d (edge uses set 0 only)", k->name, k->bindings[i].set);
        lb[i] = (VkDescriptorSetLayoutBinding){ (u32)k->bindings[i].binding, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, 0 };
    }
    VkDescriptorSetLayoutCreateInfo dli = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, 0, 0, k->n_bindings, lb };
    VK_CHECK(vkCreateDescriptorSetLayout(vk->dev, &dli, 0, &p->dsl));
    VkPushConstantRange pr = { VK_SHADER_STAGE_COMPUTE_BIT, 0, align_up(k->push_size, 4) };
    VkPipelineLayoutCreateInfo pli = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, 0, 0, 1, &p->dsl, k->push_size ? 1 : 0, &pr };
    VK_CHECK(vkCreatePipelineLayout(vk->dev, &pli, 0, &p->layout));
    VkShaderModuleCreateInfo smi = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, 0, 0, k->spv_words * 4, k->spv };
    VkShaderModule sm; VK_CHECK(vkCreateShaderModule(vk->dev, &smi, 0, &sm));
    VkComputePipelineCreateInfo cpi = { VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, 0, 0,
        { VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, 0, 0, VK_SHADER_STAGE_COMPUTE_BIT, sm, k->entry, 0 },
        p->layout, 0, -1 };
    if (vk->pipe_stats) cpi.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    f64 t0 = now_sec();
    VkResult r = vk_fault_hit(VKF_PIPELINE_FAIL) ? VK_ERROR_INITIALIZATION_FAILED : vkCreateComputePipelines(vk->dev, vk->pcache, 1, &cpi, 0, &p->pipe);
    if (vk_verbose()) errf("edge: pipeline %s: %.1f ms\n", k->name, (now_sec() - t0) * 1e3);   /* cold-start work: which compiles cost */
    vkDestroyShaderModule(vk->dev, sm, 0);
    if (r != VK_SUCCESS) die(EXIT_DEVICE, "vkCreateComputePipelines failed for kernel '%s' (%s:%s): %s", k->name, k->file, k->entry, vk_result_name(r));
    vk_name(vk, VK_OBJECT_TYPE_PIPELINE, (u64)p->pipe, k->name);
    if (vk->pipe_stats) vk_pipe_stats(vk, p);
    return p;
}

/* ---- recording ----------------------------------------------------------------- */
static void vk_begin_on(Vk *vk, VkCommandBuffer cmd, VkDescriptorPool pool, u32 sets, u32 descs, VkCommandBufferUsageFlags fl) {
    if (vk->recording) die(EXIT_USAGE, "vk_begin while already recording");
    VK_CHECK(vkResetDescriptorPool(vk->dev, pool, 0));
    VK_CHECK(vkResetCommandBuffer(cmd, 0));
    VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, 0, fl, 0 };
    VK_CHECK(vkBeginCommandBuffer(cmd, &bi));
    vk->recording = true; vk->n_dispatch = 0; vk->n_desc = 0;
    vk->cur_cmd = cmd; vk->cur_pool = pool; vk->cur_sets = sets; vk->cur_descs = descs;
}

void vk_begin(Vk *vk) { vk_begin_on(vk, vk->cmd, vk->dpool, EDGE_VK_MAX_SETS, EDGE_VK_MAX_SETS * 8, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT); }

static VkDescriptorPool vk_make_pool(Vk *vk, u32 sets, u32 descs) {
    VkDescriptorPoolSize ps = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, MAX(descs, 1) };
    VkDescriptorPoolCreateInfo dpi = { VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, 0, 0, MAX(sets, 1), 1, &ps };
    VkDescriptorPool p; VK_CHECK(vkCreateDescriptorPool(vk->dev, &dpi, 0, &p));
    return p;
}

static void vk_rec_init_sized(Vk *vk, VkRec *r, u32 sets, u32 descs) {
    memset(r, 0, sizeof *r);
    VkCommandBufferAllocateInfo cai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, 0, vk->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
    VK_CHECK(vkAllocateCommandBuffers(vk->dev, &cai, &r->cmd));
    r->sets = sets; r->descs = descs;
    r->pool = vk_make_pool(vk, sets, descs);
    VkFenceCreateInfo fci = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, 0, 0 };
    VK_CHECK(vkCreateFence(vk->dev, &fci, 0, &r->fence));
}

void vk_rec_init(Vk *vk, VkRec *r) { vk_rec_init_sized(vk, r, EDGE_VK_MAX_SETS, EDGE_VK_MAX_SETS * 8); }

/* A recording of the same dispatches as like (another key level of a decode step): its descriptor
   pool holds exactly what like's used, not EDGE_VK_MAX_SETS sets (~1-3 MB of driver memory each). */
void vk_rec_init_like(Vk *vk, VkRec *r, const VkRec *like, u32 more_sets, u32 more_descs) {
    if (like && like->ready) vk_rec_init_sized(vk, r, like->n_dispatch + more_sets, like->n_desc + more_descs);
    else vk_rec_init(vk, r);
}

void vk_rec_free(Vk *vk, VkRec *r) {
    if (r->pool) { vkDeviceWaitIdle(vk->dev); vkDestroyDescriptorPool(vk->dev, r->pool, 0); }
    if (r->fence) vkDestroyFence(vk->dev, r->fence, 0);
    memset(r, 0, sizeof *r);          /* the command buffer goes with the command pool */
}

static void vk_barrier_host(Vk *vk);

void vk_rec_begin(Vk *vk, VkRec *r) { r->ready = false; vk_begin_on(vk, r->cmd, r->pool, r->sets, r->descs, 0); }

void vk_rec_end(Vk *vk, VkRec *r) {
    if (!vk->recording || vk->cur_cmd != r->cmd) die(EXIT_USAGE, "vk_rec_end without vk_rec_begin");
    vk_barrier_host(vk);
    VK_CHECK(vkEndCommandBuffer(r->cmd));
    r->n_dispatch = vk->n_dispatch; r->n_desc = vk->n_desc;
    r->ready = true;
    vk->recording = false;
}

static void vk_submit_cmd(Vk *vk, VkCommandBuffer cmd) {
    VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, 0, 0, 0, 0, 1, &cmd, 0, 0 };
    VK_CHECK(vkQueueSubmit(vk->queue, 1, &si, vk->fence));
    VkResult r = vk_wait(vk);
    if (r != VK_SUCCESS) vk_wait_failed(vk, r);
    VK_CHECK(vkResetFences(vk->dev, 1, &vk->fence));
}

void vk_rec_submit(Vk *vk, VkRec *r) {
    if (!r->ready) die(EXIT_USAGE, "vk_rec_submit: nothing recorded");
    vk_submit_cmd(vk, r->cmd);
}

/* Submits without waiting (r's own fence): the queue runs it after everything submitted before,
   so a later recording can be queued behind it while the host waits for this one (vk_rec_wait). */
void vk_rec_submit_async(Vk *vk, VkRec *r) {
    if (!r->ready || r->pending) die(EXIT_USAGE, "vk_rec_submit_async: %s", r->pending ? "already in flight" : "nothing recorded");
    VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, 0, 0, 0, 0, 1, &r->cmd, 0, 0 };
    VK_CHECK(vkQueueSubmit(vk->queue, 1, &si, r->fence));
    r->pending = true;
}

void vk_rec_wait(Vk *vk, VkRec *r) {
    if (!r->pending) return;
    r->pending = false;
    VkResult res = vk_wait_on(vk, r->fence);
    if (res != VK_SUCCESS) vk_wait_failed(vk, res);
    VK_CHECK(vkResetFences(vk->dev, 1, &r->fence));
}

/* Does a tensor of dtype t fit a binding whose reflected element is el? Weights of block
   types and packed f16/bf16 travel as u32 words. */
static bool dtype_fits(DType t, const KBinding *b) {
    if ((u32)t >= DT_COUNT) return false;
    switch (dtype_info[t].bind) {
    case DB_F32: return b->elem == KE_F32;
    case DB_F16: return b->elem == KE_F16 || b->elem == KE_U32;
    case DB_WORDS: return b->elem == KE_U32;
    case DB_I32: return b->elem == KE_I32;
    }
    return false;
}

/* Testing aid (vk->perturb, set by edge fat): every word of every buffer kernel k writes becomes a
   wrong value (f32 2.1e6, an f16 pair of 12.0, a u32 id past any vocabulary): a whole wrong output,
   as a miscompiled kernel gives, which a deep model's logits cannot average away (one wrong word
   per dispatch could: a 24-layer file stayed within model_path's tolerance). */
static void vk_perturb_outputs(Vk *vk, const KernelInfo *k, const Tensor *const *ts) {
    for (u32 i = 0; i < k->n_bindings; i++)
        if (k->bindings[i].writable) vk_fill_words(vk, ts[k->bindings[i].binding], 0x4A004A00u, ts[k->bindings[i].binding]->nbytes);
    vk->perturb_hits++;
}

void vk_dispatch(Vk *vk, VkPipe *p, const Tensor *const *ts, u32 n, const void *push, u32 push_bytes, u32 gx, u32 gy, u32 gz) {
    const KernelInfo *k = p->k;
    if (!vk->recording && !vk->describe) die(EXIT_USAGE, "vk_dispatch('%s') outside vk_begin/vk_submit_wait", k->name);
    if (n != k->n_bindings) die(EXIT_USAGE, "kernel '%s' has %u bindings, dispatch passed %u tensors", k->name, k->n_bindings, n);
    if (push_bytes != k->push_size) die(EXIT_USAGE, "kernel '%s' takes %u push-constant bytes, dispatch passed %u", k->name, k->push_size, push_bytes);
    if (vk->n_dispatch >= EDGE_VK_MAX_SETS) die(EXIT_USAGE, "more than %d dispatches in one recording", EDGE_VK_MAX_SETS);
    if (!vk->describe && (vk->n_dispatch >= vk->cur_sets || vk->n_desc + n > vk->cur_descs))
        die(EXIT_USAGE, "kernel '%s': the recording's descriptor pool holds %u sets and %u buffers, this dispatch needs set %u and %u more buffers",
            k->name, vk->cur_sets, vk->cur_descs, vk->n_dispatch + 1, n);
    vk->n_desc += vk->describe ? 0 : n;
    vk->last_pipe = p; vk->last_n = n;
    for (u32 i = 0; i < n && i < 16; i++) vk->last_dt[i] = ts[i]->dtype;
    VkDescriptorSet set = 0;
    if (!vk->describe) {
        VkDescriptorSetAllocateInfo ai = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, 0, vk->cur_pool, 1, &p->dsl };
        VK_CHECK(vkAllocateDescriptorSets(vk->dev, &ai, &set));
    }
    VkDescriptorBufferInfo bi[16]; VkWriteDescriptorSet w[16];
    for (u32 i = 0; i < n; i++) {
        const KBinding *b = &k->bindings[i];
        if (b->binding < 0 || (u32)b->binding >= n) die(EXIT_USAGE, "kernel '%s': binding numbers must be 0..%u (found %d)", k->name, n - 1, b->binding);
        const Tensor *t = ts[b->binding];     /* callers pass tensors in binding order */
        if (!dtype_fits(t->dtype, b))
            die(EXIT_USAGE, "kernel '%s' (%s:%s) binding %d '%s' holds %s%s, but tensor '%s' is %s",
                k->name, k->file, k->entry, b->binding, b->name, kelem_name[b->elem], b->vec > 1 ? " vectors" : "", t->name, dtype_name[t->dtype]);
        if (t->nbytes > vk->caps.max_storage_range)
            die(EXIT_DEVICE, "tensor '%s' is %llu bytes, over maxStorageBufferRange %llu (bind it as row chunks)", t->name, (unsigned long long)t->nbytes, (unsigned long long)vk->caps.max_storage_range);
        if (vk->describe) continue;
        bi[i] = (VkDescriptorBufferInfo){ t->arena->blocks[t->block].buf, t->offset, t->nbytes };
        w[i] = (VkWriteDescriptorSet){ VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, 0, set, (u32)b->binding, 0, 1,
                                       VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 0, &bi[i], 0 };
    }
    if (vk->describe) {
        if (vk->on_describe) vk->on_describe(vk->describe_user, p, ts, n);
        vk->n_dispatch++;
        return;
    }
    vkUpdateDescriptorSets(vk->dev, n, w, 0, 0);
    vkCmdBindPipeline(vk->cur_cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipe);
    vkCmdBindDescriptorSets(vk->cur_cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0, 0);
    if (push_bytes) vkCmdPushConstants(vk->cur_cmd, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, align_up(push_bytes, 4), push);
    const u32 *mx = vk->props.limits.maxComputeWorkGroupCount;
    if (gx > mx[0] || gy > mx[1] || gz > mx[2]) die(EXIT_USAGE, "kernel '%s': dispatch %ux%ux%u exceeds the device's %ux%ux%u", k->name, gx, gy, gz, mx[0], mx[1], mx[2]);
    vkCmdDispatch(vk->cur_cmd, gx, gy, gz);
    vk->n_dispatch++;
    if (vk->perturb && k == &kernel_table[vk->perturb - 1]) vk_perturb_outputs(vk, k, ts);
}

/* Between ops: compute/transfer writes before compute/transfer reads and writes. No host
   stage here: a barrier whose destination is the host makes some drivers drain and flush
   their caches at every op. The end of a command buffer gets vk_barrier_host instead. */
void vk_barrier(Vk *vk) {
    if (vk->describe) return;
    VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, 0,
        VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT };
    VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(vk->cur_cmd, st, st, 0, 1, &mb, 0, 0, 0, 0);
}

/* The last command of a command buffer: everything written is visible to later
   submissions and to the host once the fence signals. */
static void vk_barrier_host(Vk *vk) {
    if (vk->describe) return;
    VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, 0,
        VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT };
    vkCmdPipelineBarrier(vk->cur_cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, 0, 0, 0);
}

void vk_submit_wait(Vk *vk) {
    if (!vk->recording || vk->cur_cmd != vk->cmd) die(EXIT_USAGE, "vk_submit_wait without vk_begin");
    vk_barrier_host(vk);
    VK_CHECK(vkEndCommandBuffer(vk->cmd));
    vk->recording = false;
    vk_submit_cmd(vk, vk->cmd);
}

/* ---- debug tools: timestamps and NaN injection ------------------------------------ */
VkQueryPool vk_ts_pool(Vk *vk, u32 n) {
    VkQueryPoolCreateInfo qi = { VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, 0, 0, VK_QUERY_TYPE_TIMESTAMP, n, 0 };
    VkQueryPool q; VK_CHECK(vkCreateQueryPool(vk->dev, &qi, 0, &q));
    return q;
}

void vk_ts_pool_free(Vk *vk, VkQueryPool q) { if (q) { vkDeviceWaitIdle(vk->dev); vkDestroyQueryPool(vk->dev, q, 0); } }
void vk_ts_reset(Vk *vk, VkQueryPool q, u32 n) { vkCmdResetQueryPool(vk->cur_cmd, q, 0, n); }
void vk_ts_write(Vk *vk, VkQueryPool q, u32 i) { vkCmdWriteTimestamp(vk->cur_cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, q, i); }

void vk_ts_read(Vk *vk, VkQueryPool q, u32 n, u64 *ticks) {
    VK_CHECK(vkGetQueryPoolResults(vk->dev, q, 0, n, (u64)n * 8, ticks, 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
}

void vk_fill_word(Vk *vk, const Tensor *t, u32 word) { vk_fill_words(vk, t, word, 4); }

void vk_fill_words(Vk *vk, const Tensor *t, u32 word, u64 bytes) {
    if (vk->describe || bytes < 4) return;
    VkMemoryBarrier pre = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, 0, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT };
    vkCmdPipelineBarrier(vk->cur_cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &pre, 0, 0, 0, 0);
    vkCmdFillBuffer(vk->cur_cmd, t->arena->blocks[t->block].buf, t->offset, bytes & ~(u64)3, word);
    VkMemoryBarrier post = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, 0, VK_ACCESS_TRANSFER_WRITE_BIT,
                             VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT };
    vkCmdPipelineBarrier(vk->cur_cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &post, 0, 0, 0, 0);
}

void vk_copy_bytes(Vk *vk, const Tensor *src, const Tensor *dst, u64 bytes) {
    if (vk->describe || !bytes) return;
    if (bytes > src->nbytes || bytes > dst->nbytes) die(EXIT_USAGE, "edge: vk_copy_bytes: %llu bytes from '%s' (%llu) to '%s' (%llu)",
                                                         (unsigned long long)bytes, src->name, (unsigned long long)src->nbytes, dst->name, (unsigned long long)dst->nbytes);
    VkMemoryBarrier pre = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, 0, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT };
    vkCmdPipelineBarrier(vk->cur_cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &pre, 0, 0, 0, 0);
    VkBufferCopy c = { src->offset, dst->offset, bytes };
    vkCmdCopyBuffer(vk->cur_cmd, src->arena->blocks[src->block].buf, dst->arena->blocks[dst->block].buf, 1, &c);
    VkMemoryBarrier post = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, 0, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT };
    vkCmdPipelineBarrier(vk->cur_cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &post, 0, 0, 0, 0);
}

/* ---- edge info ------------------------------------------------------------------- */
void vk_print_info(const Vk *vk) {
    const VkPhysicalDeviceProperties *p = &vk->props;
    const char *types[] = { "other", "integrated GPU", "discrete GPU", "virtual GPU", "CPU" };
    out("device:            %s (%s)\n", p->deviceName, p->deviceType <= 4 ? types[p->deviceType] : "?");
    out("driver:            %s %s (version 0x%08x)\n", vk->driver_name[0] ? vk->driver_name : "?", vk->driver_info, p->driverVersion);
    out("vulkan:            %u.%u.%u\n", VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion), VK_API_VERSION_PATCH(p->apiVersion));
    out("vendor/device id:  0x%04x / 0x%04x\n", p->vendorID, p->deviceID);
    const VkCaps *c = &vk->caps;
    out("profile:           %s\n", c->profile ? c->profile : "none (the device's own limits; EDGE_PROFILE=NAME restricts them)");
    out("subgroup size:     %u\n", c->subgroup_size);
    out("subgroup ops:      %s%s%s%s%s%s%s%s\n", c->subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT ? "basic " : "",
        c->subgroup_ops & VK_SUBGROUP_FEATURE_VOTE_BIT ? "vote " : "", c->subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT ? "arithmetic " : "",
        c->subgroup_ops & VK_SUBGROUP_FEATURE_BALLOT_BIT ? "ballot " : "", c->subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT ? "shuffle " : "",
        c->subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT ? "shuffle-relative " : "", c->subgroup_ops & VK_SUBGROUP_FEATURE_CLUSTERED_BIT ? "clustered " : "",
        c->subgroup_ops & VK_SUBGROUP_FEATURE_QUAD_BIT ? "quad" : "");
    out("f16 arithmetic:    %s\n", c->f16_arith ? "yes" : "no");
    out("int8 arithmetic:   %s\n", c->int8_arith ? "yes" : "no");
    out("coop. matrices:    %s\n", c->coopmat ? "yes (16x16x16 f16 -> f32, prefill products)" : "no");
    out("int dot products:  %s\n", c->idot ? "yes (4x8-bit packed: the int8 decode lanes of gate/up and the LM head)" :
        c->idot_ok ? "yes, not accelerated (unused; EDGE_IDOT=1 uses them)" : "no");
    out("16-bit storage:    %s\n", c->storage16 ? "yes" : "no");
    out("timestamps:        %s (period %.3f ns)\n", c->timestamps ? "yes" : "no", (f64)c->timestamp_period_ns);
    out("maxStorageBufferRange:     %llu\n", (unsigned long long)c->max_storage_range);
    out("maxMemoryAllocationSize:   %llu\n", (unsigned long long)c->max_alloc);
    out("minStorageBufferOffsetAlignment: %llu\n", (unsigned long long)p->limits.minStorageBufferOffsetAlignment);
    out("shared memory per workgroup: %u\n", c->max_shared);
    out("max workgroup:     %u invocations, size %u x %u x %u\n", c->max_wg_invocations, c->max_wg_size[0], c->max_wg_size[1], c->max_wg_size[2]);
    out("unified memory:    %s\n", c->unified ? "yes (device-local memory is host-visible)" : "no (staging copies)");
    if (c->compute_units) out("compute units:     %u (the driver's SM / shader core count)\n", c->compute_units);
    else out("compute units:     not reported by the driver\n");
    for (u32 i = 0; i < vk->mem.memoryHeapCount; i++)
        out("memory heap %u:     %llu MiB%s\n", i, (unsigned long long)(vk->mem.memoryHeaps[i].size >> 20),
            vk->mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? " device-local" : "");
    for (u32 i = 0; i < vk->mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = vk->mem.memoryTypes[i].propertyFlags;
        out("memory type %u:     heap %u%s%s%s%s\n", i, vk->mem.memoryTypes[i].heapIndex,
            f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT ? " device-local" : "", f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT ? " host-visible" : "",
            f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT ? " host-coherent" : "", f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT ? " host-cached" : "");
    }
}

void kernel_print_table(void) {
    out("\nkernels (%d, SPIR-V by Tint, reflected at build time):\n", KERNEL_TABLE_COUNT);
    for (i32 i = 0; i < KERNEL_TABLE_COUNT; i++) {
        const KernelInfo *k = &kernel_table[i];
        out("  %-24s %s:%s  wg %ux%ux%u  push %uB  shared %uB%s%s%s\n", k->name, k->file, k->entry, k->wg[0], k->wg[1], k->wg[2],
            k->push_size, k->shared_bytes, k->cap_f16 ? "  f16" : "", k->cap_s16 ? "  16bit-storage" : "", k->cap_subgroup ? "  subgroups" : "");
        for (u32 b = 0; b < k->n_bindings; b++) {
            const KBinding *kb = &k->bindings[b];
            char ty[32];
            if (kb->vec > 1) fmt_buf(ty, sizeof ty, "vec%u<%s>", kb->vec, kelem_name[kb->elem]);
            else fmt_buf(ty, sizeof ty, "%s", kelem_name[kb->elem]);
            out("      @binding(%d) %-10s array<%s>  %s\n", kb->binding, kb->name, ty, kb->writable ? "read_write" : "read");
        }
    }
}

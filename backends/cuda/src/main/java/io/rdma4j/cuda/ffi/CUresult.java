package io.rdma4j.cuda.ffi;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code typedef enum cudaError_enum { CUDA_SUCCESS = 0, ... } CUresult;} from {@code cuda.h} (CUDA 13.0). Every value
 * is checked against the installed header by the layout test. A driver may return codes newer than this table;
 * {@link #name(int)} keeps them as numbers and the caller asks the driver ({@code cuGetErrorName}) for their names.
 *
 * <p>Note that the driver API has no {@code INSUFFICIENT_DRIVER} code (35 is the runtime's
 * {@code cudaErrorInsufficientDriver}); a driver too old for a call reports
 * {@link #CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER} or lacks the symbol.
 */
public final class CUresult {
    public static final int CUDA_SUCCESS = 0;
    public static final int CUDA_ERROR_INVALID_VALUE = 1;
    public static final int CUDA_ERROR_OUT_OF_MEMORY = 2;
    public static final int CUDA_ERROR_NOT_INITIALIZED = 3;
    public static final int CUDA_ERROR_DEINITIALIZED = 4;
    public static final int CUDA_ERROR_PROFILER_DISABLED = 5;
    public static final int CUDA_ERROR_PROFILER_NOT_INITIALIZED = 6;
    public static final int CUDA_ERROR_PROFILER_ALREADY_STARTED = 7;
    public static final int CUDA_ERROR_PROFILER_ALREADY_STOPPED = 8;
    public static final int CUDA_ERROR_STUB_LIBRARY = 34;
    public static final int CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36;
    public static final int CUDA_ERROR_DEVICE_UNAVAILABLE = 46;
    public static final int CUDA_ERROR_NO_DEVICE = 100;
    public static final int CUDA_ERROR_INVALID_DEVICE = 101;
    public static final int CUDA_ERROR_DEVICE_NOT_LICENSED = 102;
    public static final int CUDA_ERROR_INVALID_IMAGE = 200;
    public static final int CUDA_ERROR_INVALID_CONTEXT = 201;
    public static final int CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202;
    public static final int CUDA_ERROR_MAP_FAILED = 205;
    public static final int CUDA_ERROR_UNMAP_FAILED = 206;
    public static final int CUDA_ERROR_ARRAY_IS_MAPPED = 207;
    public static final int CUDA_ERROR_ALREADY_MAPPED = 208;
    public static final int CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
    public static final int CUDA_ERROR_ALREADY_ACQUIRED = 210;
    public static final int CUDA_ERROR_NOT_MAPPED = 211;
    public static final int CUDA_ERROR_NOT_MAPPED_AS_ARRAY = 212;
    public static final int CUDA_ERROR_NOT_MAPPED_AS_POINTER = 213;
    public static final int CUDA_ERROR_ECC_UNCORRECTABLE = 214;
    public static final int CUDA_ERROR_UNSUPPORTED_LIMIT = 215;
    public static final int CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216;
    public static final int CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217;
    public static final int CUDA_ERROR_INVALID_PTX = 218;
    public static final int CUDA_ERROR_INVALID_GRAPHICS_CONTEXT = 219;
    public static final int CUDA_ERROR_NVLINK_UNCORRECTABLE = 220;
    public static final int CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221;
    public static final int CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
    public static final int CUDA_ERROR_JIT_COMPILATION_DISABLED = 223;
    public static final int CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224;
    public static final int CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225;
    public static final int CUDA_ERROR_CONTAINED = 226;
    public static final int CUDA_ERROR_INVALID_SOURCE = 300;
    public static final int CUDA_ERROR_FILE_NOT_FOUND = 301;
    public static final int CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302;
    public static final int CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303;
    public static final int CUDA_ERROR_OPERATING_SYSTEM = 304;
    public static final int CUDA_ERROR_INVALID_HANDLE = 400;
    public static final int CUDA_ERROR_ILLEGAL_STATE = 401;
    public static final int CUDA_ERROR_LOSSY_QUERY = 402;
    public static final int CUDA_ERROR_NOT_FOUND = 500;
    public static final int CUDA_ERROR_NOT_READY = 600;
    public static final int CUDA_ERROR_ILLEGAL_ADDRESS = 700;
    public static final int CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
    public static final int CUDA_ERROR_LAUNCH_TIMEOUT = 702;
    public static final int CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703;
    public static final int CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;
    public static final int CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705;
    public static final int CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708;
    public static final int CUDA_ERROR_CONTEXT_IS_DESTROYED = 709;
    public static final int CUDA_ERROR_ASSERT = 710;
    public static final int CUDA_ERROR_TOO_MANY_PEERS = 711;
    public static final int CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712;
    public static final int CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713;
    public static final int CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
    public static final int CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
    public static final int CUDA_ERROR_MISALIGNED_ADDRESS = 716;
    public static final int CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
    public static final int CUDA_ERROR_INVALID_PC = 718;
    public static final int CUDA_ERROR_LAUNCH_FAILED = 719;
    public static final int CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720;
    public static final int CUDA_ERROR_TENSOR_MEMORY_LEAK = 721;
    public static final int CUDA_ERROR_NOT_PERMITTED = 800;
    public static final int CUDA_ERROR_NOT_SUPPORTED = 801;
    public static final int CUDA_ERROR_SYSTEM_NOT_READY = 802;
    public static final int CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803;
    public static final int CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804;
    public static final int CUDA_ERROR_MPS_CONNECTION_FAILED = 805;
    public static final int CUDA_ERROR_MPS_RPC_FAILURE = 806;
    public static final int CUDA_ERROR_MPS_SERVER_NOT_READY = 807;
    public static final int CUDA_ERROR_MPS_MAX_CLIENTS_REACHED = 808;
    public static final int CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED = 809;
    public static final int CUDA_ERROR_MPS_CLIENT_TERMINATED = 810;
    public static final int CUDA_ERROR_CDP_NOT_SUPPORTED = 811;
    public static final int CUDA_ERROR_CDP_VERSION_MISMATCH = 812;
    public static final int CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
    public static final int CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901;
    public static final int CUDA_ERROR_STREAM_CAPTURE_MERGE = 902;
    public static final int CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903;
    public static final int CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904;
    public static final int CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905;
    public static final int CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906;
    public static final int CUDA_ERROR_CAPTURED_EVENT = 907;
    public static final int CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908;
    public static final int CUDA_ERROR_TIMEOUT = 909;
    public static final int CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910;
    public static final int CUDA_ERROR_EXTERNAL_DEVICE = 911;
    public static final int CUDA_ERROR_INVALID_CLUSTER_SIZE = 912;
    public static final int CUDA_ERROR_FUNCTION_NOT_LOADED = 913;
    public static final int CUDA_ERROR_INVALID_RESOURCE_TYPE = 914;
    public static final int CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915;
    public static final int CUDA_ERROR_KEY_ROTATION = 916;
    public static final int CUDA_ERROR_UNKNOWN = 999;

    private static final Map<Integer, String> NAMES = new HashMap<>();
    private static final Map<String, Integer> VALUES = new LinkedHashMap<>();

    static {
        for (Field f : CUresult.class.getDeclaredFields()) {
            if (f.getType() == int.class
                    && Modifier.isStatic(f.getModifiers())
                    && f.getName().startsWith("CUDA_")) {
                try {
                    NAMES.putIfAbsent(f.getInt(null), f.getName());
                    VALUES.put(f.getName(), f.getInt(null));
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
            }
        }
    }

    private CUresult() {}

    /** @return the enumerator's name, e.g. {@code CUDA_ERROR_NO_DEVICE}, or null for a code this table does not know */
    public static String name(int code) {
        return NAMES.get(code);
    }

    /** @return every enumerator this table knows, by name (for the header check) */
    public static Map<String, Integer> all() {
        return Collections.unmodifiableMap(VALUES);
    }
}

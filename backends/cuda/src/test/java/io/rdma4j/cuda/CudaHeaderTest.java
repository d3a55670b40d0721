package io.rdma4j.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.cuda.ffi.CUresult;
import io.rdma4j.cuda.ffi.CudaDriver;
import io.rdma4j.ffi.CLayoutCheck;
import io.rdma4j.ffi.NativeFunction;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Checks the bindings against the installed {@code cuda.h}: enum values and type sizes through a compiled C program,
 * and the exported symbol each binding uses against the header's {@code #define cuX cuX_v2} versioning.
 *
 * <p>The CUDA toolkit is not a Debian package the project installs, so a host without {@code cuda.h} (a fresh Debian
 * 12) skips this test with that reason even under {@code -Drdma4j.require.toolchain=true}; where the header exists, the
 * checks run and must pass (and gcc is then required as for every other layout test).
 */
class CudaHeaderTest {
    private Path header;

    @BeforeEach
    void findHeader() {
        // the directory CLayoutCheck searches for toolkit headers; the toolkit's installers link it to
        // /usr/local/cuda-X.Y
        Path h = Path.of("/usr/local/cuda/include/cuda.h");
        Assumptions.assumeTrue(
                Files.isRegularFile(h),
                "no CUDA toolkit headers at " + h
                        + " (the CUDA toolkit is not a Debian package rdma4j installs, so this check is skipped even when"
                        + " rdma4j.require.toolchain=true)");
        header = h;
    }

    @Test
    void enumValuesAndTypeSizesMatchCudaH() throws Exception {
        CLayoutCheck check = new CLayoutCheck().include("cuda.h").compilerArg("-I" + header.getParent());
        int count = 0;
        for (var e : CUresult.all().entrySet()) {
            check.constant(e.getKey(), e.getValue());
            count++;
        }
        for (Field f : CudaDriver.class.getFields()) {
            if (f.getName().startsWith("CU_") && Modifier.isStatic(f.getModifiers())) {
                check.constant(f.getName(), ((Number) f.get(null)).longValue());
                count++;
            }
        }
        check.constant("sizeof(CUdeviceptr)", CudaDriver.CUdeviceptr.byteSize())
                .constant("sizeof(CUdevice)", CudaDriver.CUdevice.byteSize())
                .constant("sizeof(CUcontext)", CudaDriver.CUcontext.byteSize())
                .constant("sizeof(CUstream)", CudaDriver.CUstream.byteSize())
                .constant("sizeof(CUresult)", CudaDriver.ENUM.byteSize())
                .constant("sizeof(CUpointer_attribute)", CudaDriver.ENUM.byteSize())
                .constant("sizeof(CUmemRangeHandleType)", CudaDriver.ENUM.byteSize())
                .constant("sizeof(CUflushGPUDirectRDMAWritesTarget)", CudaDriver.ENUM.byteSize())
                .constant("sizeof(CUflushGPUDirectRDMAWritesScope)", CudaDriver.ENUM.byteSize());
        assertTrue(count > 100, "expected every CUresult and CU_* constant, got " + count);
        List<String> mismatches = check.run();
        assertTrue(mismatches.isEmpty(), String.join("\n", mismatches));
    }

    @Test
    void everyBindingUsesTheSymbolCudaHMapsItsNameTo() throws Exception {
        String text = Files.readString(header);
        // #define cuMemcpyHtoD __CUDA_API_PTDS(cuMemcpyHtoD_v2) -> cuMemcpyHtoD_v2 (without per-thread default streams)
        Matcher m = Pattern.compile("(?m)^#define\\s+(cu\\w+)\\s+(?:__CUDA_API_PT[DS][SZ]\\((\\w+)\\)|(cu\\w+))\\s*$")
                .matcher(text);
        Map<String, String> versioned = new HashMap<>();
        while (m.find()) {
            versioned.putIfAbsent(m.group(1), m.group(2) != null ? m.group(2) : m.group(3));
        }
        assertEquals("cuMemAlloc_v2", versioned.get("cuMemAlloc"), "the header's versioning was not parsed");
        List<String> wrong = new ArrayList<>();
        int bindings = 0;
        for (Field f : CudaDriver.class.getFields()) {
            if (f.getType() != NativeFunction.class) {
                continue;
            }
            bindings++;
            String api = f.getName();
            String symbol = ((NativeFunction) f.get(null)).name();
            String expected = versioned.getOrDefault(api, api);
            if (!symbol.equals(expected)) {
                wrong.add(api + " binds " + symbol + " but cuda.h maps it to " + expected);
            }
            if (!Pattern.compile("CUresult CUDAAPI " + Pattern.quote(api) + "\\(")
                    .matcher(text)
                    .find()) {
                wrong.add(api + " is not declared in cuda.h");
            }
        }
        assertTrue(bindings >= 20, "expected the driver bindings, found " + bindings);
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }
}

package io.rdma4j.ibverbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.NativeLibrary;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs only in the test VM ({@code scripts/testvm test ibverbs}), where the guest's init has created the Soft-RoCE
 * device {@code rxe0}; host builds exclude the {@code testvm} tag. Proves the guest gives Java what the verbs tests
 * need.
 */
@Tag("testvm")
class GuestSmokeTest {
    private static final NativeLibrary VERBS = NativeLibrary.builder("libibverbs")
            .sonames("libibverbs.so.1")
            .installHint("apt-get install libibverbs1 ibverbs-providers")
            .load();

    @Test
    void guestHasSoftRoceDevice() {
        assertTrue(
                Files.isDirectory(Path.of("/sys/class/infiniband/rxe0")),
                "no /sys/class/infiniband/rxe0: the test VM's init did not create the Soft-RoCE device");
    }

    @Test
    void libibverbsLoadsAndListsRxe0() throws Throwable {
        assertDoesNotThrow(VERBS::ensureAvailable);
        // struct ibv_device **ibv_get_device_list(int *num_devices); const char *ibv_get_device_name(struct ibv_device
        // *device);
        var getList = VERBS.function("ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS))
                .handle();
        var getName = VERBS.function("ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS))
                .handle();
        var freeList = VERBS.function("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS))
                .handle();
        List<String> names = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) getList.invokeExact(count);
            assertNotEquals(MemorySegment.NULL, list, "ibv_get_device_list returned NULL");
            int n = count.get(JAVA_INT, 0);
            MemorySegment devices = list.reinterpret(ADDRESS.byteSize() * n);
            try {
                for (int i = 0; i < n; i++) {
                    MemorySegment name = (MemorySegment) getName.invokeExact(devices.getAtIndex(ADDRESS, i));
                    names.add(name.reinterpret(64).getString(0));
                }
            } finally {
                freeList.invokeExact(list);
            }
        }
        assertTrue(names.contains("rxe0"), "ibv_get_device_list gave " + names + ", expected rxe0");
    }
}

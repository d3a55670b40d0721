package io.rdma4j.cli;

import io.rdma4j.ffi.NativeLibrary;
import io.rdma4j.ffi.SignalGuard;
import io.rdma4j.libfabric.Hints;
import io.rdma4j.libfabric.Info;
import io.rdma4j.libfabric.InfoList;
import io.rdma4j.libfabric.Libfabric;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code ./rdma4j info}: which native libraries load here (with versions, and why the others do not), the libfabric
 * providers they offer, and any signal handler a library replaced that the JVM's was put back over.
 */
final class InfoCommand implements Command {
    @Override
    public String name() {
        return "info";
    }

    @Override
    public String summary() {
        return "native libraries, libfabric providers and RDMA devices usable here, with versions";
    }

    @Override
    public int run(String[] args) {
        PrintStream out = System.out;
        out.println("Native libraries");
        out.printf(
                "  %-18s %s%n",
                "libfabric.so.1",
                Libfabric.isAvailable()
                        ? "libfabric " + Libfabric.versionString() + " (" + loadedFile("libfabric.so.1") + ")"
                        : unavailable(Libfabric.unavailabilityCause(), "apt-get install libfabric1"));
        NativeLibrary verbs = NativeLibrary.builder("libibverbs")
                .sonames("libibverbs.so.1")
                .installHint("apt-get install libibverbs1 ibverbs-providers")
                .load();
        out.printf(
                "  %-18s %s%n",
                "libibverbs.so.1",
                verbs.isAvailable()
                        ? loadedFile("libibverbs.so.1") + ", " + rdmaDevices(verbs)
                        : unavailable(verbs.unavailabilityCause(), "apt-get install libibverbs1 ibverbs-providers"));
        NativeLibrary rdmacm =
                NativeLibrary.builder("librdmacm").sonames("librdmacm.so.1").load();
        out.printf(
                "  %-18s %s%n",
                "librdmacm.so.1",
                rdmacm.isAvailable()
                        ? loadedFile("librdmacm.so.1")
                        : unavailable(rdmacm.unavailabilityCause(), "apt-get install librdmacm1"));
        NativeLibrary cuda =
                NativeLibrary.builder("libcuda").sonames("libcuda.so.1").load();
        out.printf(
                "  %-18s %s%n",
                "libcuda.so.1",
                cuda.isAvailable()
                        ? "CUDA driver API " + cudaVersion(cuda) + " (" + loadedFile("libcuda.so.1") + ")"
                        : unavailable(
                                cuda.unavailabilityCause(),
                                "install the NVIDIA driver (it ships libcuda.so.1); GPU memory is unavailable"));

        if (Libfabric.isAvailable()) {
            out.println();
            out.println("libfabric providers (fi_getinfo without hints, API " + (Libfabric.apiVersion() >>> 16) + "."
                    + (Libfabric.apiVersion() & 0xffff) + ")");
            printProviders(out);
        }
        out.println();
        List<String> restored = SignalGuard.restored();
        if (restored.isEmpty()) {
            out.println("Signal handlers: no library replaced one of the JVM's");
        } else {
            out.println("Signal handlers a library replaced and rdma4j put back:");
            restored.forEach(r -> out.println("  " + r));
        }
        return 0;
    }

    private static void printProviders(PrintStream out) {
        // one row per provider, endpoint type and mr_mode; the fabrics and domains it is offered on are listed together
        Map<String, Set<String>> rows = new LinkedHashMap<>();
        try (InfoList all = Libfabric.getinfo(Hints.none())) {
            for (Info i : all) {
                String key = String.format(
                        "  %-13s %-7s %-12s %-28s ",
                        i.provider(),
                        i.providerVersionString(),
                        Info.endpointTypeToString(i.endpointType()),
                        Info.mrModeToString(i.mrMode()));
                rows.computeIfAbsent(key, k -> new LinkedHashSet<>())
                        .add(
                                java.util.Objects.equals(i.domain(), i.fabric())
                                        ? i.domain()
                                        : i.domain() + " " + i.fabric());
            }
        }
        out.printf("  %-13s %-7s %-12s %-28s %s%n", "provider", "version", "ep type", "mr_mode", "domains and fabrics");
        rows.forEach((k, v) -> out.println(k + String.join(", ", v)));
        out.println("  (verbs, efa, psm2/psm3 and cxi are listed only where their hardware and drivers are present)");
        List<String> rdm = new ArrayList<>();
        try (InfoList usable = Libfabric.getinfo(Hints.rdm())) {
            for (Info i : usable) {
                String p = i.provider();
                if (!rdm.contains(p)) {
                    rdm.add(p);
                }
            }
        }
        out.println("  usable for rdma4j (FI_EP_RDM with FI_MSG|FI_RMA): "
                + (rdm.isEmpty() ? "none" : String.join(", ", rdm)));
    }

    private static String unavailable(Throwable cause, String fix) {
        String why = cause == null ? "not loaded" : cause.getMessage();
        return "not usable: " + why + " (" + fix + ")";
    }

    /** The file the dynamic linker mapped for {@code soname}, whose name carries the library's full version. */
    private static String loadedFile(String soname) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                int slash = line.indexOf('/');
                if (slash >= 0 && line.endsWith("/" + soname) || slash >= 0 && line.contains("/" + soname + ".")) {
                    Path p = Path.of(line.substring(slash));
                    return p.toRealPath().toString();
                }
            }
        } catch (IOException | RuntimeException e) {
            return soname;
        }
        return soname;
    }

    /** {@code struct ibv_device **ibv_get_device_list(int *num_devices);} and {@code ibv_free_device_list}. */
    private static String rdmaDevices(NativeLibrary verbs) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = (MemorySegment) verbs.function(
                            "ibv_get_device_list", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS))
                    .handle()
                    .invokeExact(num);
            if (list.equals(MemorySegment.NULL)) {
                return "no RDMA devices (ibv_get_device_list found no kernel verbs support: load ib_uverbs with a"
                        + " NIC driver, or Soft-RoCE: rdma link add rxe0 type rxe netdev eth0)";
            }
            int n = num.get(ValueLayout.JAVA_INT, 0);
            verbs.function("ibv_free_device_list", FunctionDescriptor.ofVoid(ValueLayout.ADDRESS))
                    .handle()
                    .invokeExact(list);
            return n == 0
                    ? "no RDMA devices (verbs backends need a NIC or Soft-RoCE: rdma link add rxe0 type rxe netdev eth0)"
                    : n + " RDMA device" + (n == 1 ? "" : "s");
        } catch (Throwable t) {
            return "device list unavailable: " + t.getMessage();
        }
    }

    /** {@code CUresult cuDriverGetVersion(int *driverVersion);} */
    private static String cudaVersion(NativeLibrary cuda) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            int rc = (int) cuda.function(
                            "cuDriverGetVersion", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS))
                    .handle()
                    .invokeExact(v);
            int ver = v.get(ValueLayout.JAVA_INT, 0);
            return rc == 0
                    ? (ver / 1000) + "." + (ver % 1000 / 10)
                    : "version unknown (cuDriverGetVersion returned " + rc + ")";
        } catch (Throwable t) {
            return "version unknown: " + t.getMessage();
        }
    }
}

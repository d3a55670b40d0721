package io.rdma4j.topology;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import oshi.SystemInfo;
import oshi.hardware.CentralProcessor;
import oshi.hardware.HardwareAbstractionLayer;

/**
 * What the CPUs and memory of a machine are, for the {@code ./rdma4j topo} header.
 *
 * @param cpuModel processor model name, empty when unknown
 * @param packages sockets, 0 when unknown
 * @param physicalCores cores, 0 when unknown
 * @param logicalCpus hardware threads, 0 when unknown
 * @param memoryBytes total memory, 0 when unknown
 * @param source {@code oshi} for the live machine, else the captured tree it was read from
 */
public record SystemSummary(
        String cpuModel, int packages, int physicalCores, int logicalCpus, long memoryBytes, String source) {
    private static final Pattern MEM_TOTAL = Pattern.compile("MemTotal:\\s+(\\d+)\\s*kB");

    /**
     * Reads the running machine through OSHI; should OSHI fail (its JNA cannot load, say), falls back to {@code /proc}
     * and says so in {@link #source()}.
     */
    public static SystemSummary live() {
        try {
            HardwareAbstractionLayer hal = new SystemInfo().getHardware();
            CentralProcessor cpu = hal.getProcessor();
            return new SystemSummary(
                    cpu.getProcessorIdentifier().getName().trim(),
                    cpu.getPhysicalPackageCount(),
                    cpu.getPhysicalProcessorCount(),
                    cpu.getLogicalProcessorCount(),
                    hal.getMemory().getTotal(),
                    "oshi");
        } catch (RuntimeException | LinkageError e) {
            SystemSummary p = fromProc(Path.of("/"));
            return new SystemSummary(
                    p.cpuModel(),
                    p.packages(),
                    p.physicalCores(),
                    p.logicalCpus(),
                    p.memoryBytes(),
                    "/proc (OSHI failed: " + e + ")");
        }
    }

    /**
     * Reads {@code proc/cpuinfo} and {@code proc/meminfo} of a captured tree (OSHI reads only the running machine).
     * Missing files leave fields unknown.
     */
    public static SystemSummary fromProc(Path fsroot) {
        String model = "";
        Set<String> packages = new HashSet<>();
        Set<String> cores = new HashSet<>();
        int logical = 0;
        String physical = "0";
        String cpuinfo = read(fsroot.resolve("proc/cpuinfo"));
        for (String line : cpuinfo.split("\n")) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String key = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            switch (key) {
                case "processor" -> logical++;
                case "model name" -> {
                    if (model.isEmpty()) {
                        model = value;
                    }
                }
                case "physical id" -> {
                    physical = value;
                    packages.add(value);
                }
                case "core id" -> cores.add(physical + "/" + value);
                default -> {}
            }
        }
        long mem = 0;
        Matcher m = MEM_TOTAL.matcher(read(fsroot.resolve("proc/meminfo")));
        if (m.find()) {
            mem = Long.parseLong(m.group(1)) * 1024;
        }
        return new SystemSummary(
                model, packages.size(), cores.isEmpty() ? logical : cores.size(), logical, mem, fsroot.toString());
    }

    private static String read(Path p) {
        try {
            return Files.isRegularFile(p) ? Files.readString(p, StandardCharsets.ISO_8859_1) : "";
        } catch (IOException e) {
            return "";
        }
    }
}

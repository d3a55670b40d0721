package io.rdma4j.topology.internal;

import io.rdma4j.topology.NumaNode;
import io.rdma4j.topology.NumaSource;
import io.rdma4j.topology.PciAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * NUMA nodes and CPUs: the nodes under {@code devices/system/node} (or one guessed node), the nodes only devices name,
 * and where a PCI function sits from its {@code numa_node} and {@code local_cpulist}.
 */
final class NumaScan {
    private static final Pattern NODE_DIR = Pattern.compile("node(\\d+)");
    private static final Pattern CPU_DIR = Pattern.compile("cpu(\\d+)");
    private static final Pattern MEM_TOTAL = Pattern.compile("MemTotal:\\s+(\\d+)\\s*kB");

    private final SysfsTree tree;
    private final Model model;
    private final Map<Integer, BitSet> nodeCpus = new TreeMap<>();
    /** True when the tree had no node folders and node 0 was assumed to hold every CPU. */
    private boolean singleNodeGuessed;

    NumaScan(SysfsTree tree, Model model) {
        this.tree = tree;
        this.model = model;
    }

    /** What a PCI function says about its node: its {@code numa_node} and the CPUs it reports local. */
    record Claim(PciAddress addr, int numaAttr, BitSet local) {}

    /** @return the number of nodes known */
    int nodeCount() {
        return nodeCpus.size();
    }

    /** Reads the nodes, their CPUs, memory and distances; one node with every CPU when the tree has none. */
    void scan() {
        Map<Integer, Path> nodes = new TreeMap<>();
        for (Path p : SysfsTree.list(tree.sys("devices/system/node"))) {
            Matcher m = NODE_DIR.matcher(p.getFileName().toString());
            if (m.matches() && Files.isDirectory(p)) {
                nodes.put(Integer.parseInt(m.group(1)), p);
            }
        }
        if (nodes.isEmpty()) {
            // a kernel without NUMA: one node with every CPU and all memory
            BitSet cpus = CpuSets.parseList(SysfsTree.read(tree.sys("devices/system/cpu/online")));
            if (cpus.isEmpty()) {
                for (Path p : SysfsTree.list(tree.sys("devices/system/cpu"))) {
                    Matcher m = CPU_DIR.matcher(p.getFileName().toString());
                    if (m.matches()) {
                        cpus.set(Integer.parseInt(m.group(1)));
                    }
                }
            }
            long mem = 0;
            String meminfo = SysfsTree.read(tree.realRoot.resolve("proc/meminfo"));
            if (meminfo != null) {
                Matcher m = MEM_TOTAL.matcher(meminfo);
                if (m.find()) {
                    mem = Long.parseLong(m.group(1)) * 1024;
                }
            }
            nodeCpus.put(0, cpus);
            model.numaNodes.add(new NumaNode(0, CpuSets.toList(cpus), mem, List.of(10)));
            singleNodeGuessed = true;
            return;
        }
        for (Map.Entry<Integer, Path> e : nodes.entrySet()) {
            Path dir = e.getValue();
            BitSet cpus = CpuSets.parseList(SysfsTree.read(dir.resolve("cpulist")));
            if (cpus.isEmpty()) {
                for (Path p : SysfsTree.list(dir)) {
                    Matcher m = CPU_DIR.matcher(p.getFileName().toString());
                    if (m.matches()) {
                        cpus.set(Integer.parseInt(m.group(1)));
                    }
                }
            }
            long mem = 0;
            String meminfo = SysfsTree.read(dir.resolve("meminfo"));
            if (meminfo != null) {
                Matcher m = MEM_TOTAL.matcher(meminfo);
                if (m.find()) {
                    mem = Long.parseLong(m.group(1)) * 1024;
                }
            }
            List<Integer> distances = new ArrayList<>();
            String d = SysfsTree.read(dir.resolve("distance"));
            if (d != null && !d.isBlank()) {
                for (String t : d.trim().split("\\s+")) {
                    try {
                        distances.add(Integer.parseInt(t));
                    } catch (NumberFormatException ex) {
                        distances.clear();
                        break;
                    }
                }
            }
            nodeCpus.put(e.getKey(), cpus);
            model.numaNodes.add(new NumaNode(e.getKey(), CpuSets.toList(cpus), mem, distances));
        }
    }

    /**
     * A node that a device's {@code numa_node} names exists even when its folder is missing (a capture that skipped
     * {@code devices/system/node}, a trimmed tree): it is listed with the CPUs its devices report local. When the tree
     * had no node folder at all, node 0 was a guess holding every CPU; the CPUs the named nodes claim leave it, and its
     * memory (the whole machine's) becomes unknown.
     */
    void addNodesNamedByDevices(List<Claim> found) {
        BitSet all = new BitSet();
        nodeCpus.values().forEach(all::or);
        TreeMap<Integer, BitSet> named = new TreeMap<>();
        TreeMap<Integer, List<String>> namedBy = new TreeMap<>();
        for (Claim f : found) {
            if (f.numaAttr < 0 || nodeCpus.containsKey(f.numaAttr)) {
                continue;
            }
            BitSet cpus = named.computeIfAbsent(f.numaAttr, k -> new BitSet());
            namedBy.computeIfAbsent(f.numaAttr, k -> new ArrayList<>()).add(f.addr.toString());
            // a local_cpulist of every CPU (as platforms without locality report) says nothing about the node
            if (!f.local.equals(all)) {
                cpus.or(f.local);
            }
        }
        if (named.isEmpty()) {
            return;
        }
        if (singleNodeGuessed) {
            BitSet claimed = new BitSet();
            named.values().forEach(claimed::or);
            BitSet rest = (BitSet) nodeCpus.get(0).clone();
            rest.andNot(claimed);
            boolean node0Named = found.stream().anyMatch(f -> f.numaAttr == 0);
            model.numaNodes.removeIf(n -> n.id() == 0);
            nodeCpus.remove(0);
            if (!rest.isEmpty() || node0Named) {
                nodeCpus.put(0, rest);
                model.numaNodes.add(new NumaNode(0, CpuSets.toList(rest), 0, List.of()));
            }
        }
        named.forEach((id, cpus) -> {
            nodeCpus.put(id, cpus);
            model.numaNodes.add(new NumaNode(id, CpuSets.toList(cpus), 0, List.of()));
            List<String> by = namedBy.get(id);
            model.warnings.add("NUMA node " + id + " is named by numa_node of "
                    + String.join(", ", by.subList(0, Math.min(4, by.size()))) + (by.size() > 4 ? ", ..." : "")
                    + " but sys/devices/system/node/node" + id
                    + " is missing: listed with the CPUs those devices report local ("
                    + (cpus.isEmpty() ? "none" : CpuSets.format(CpuSets.toList(cpus))) + "), memory unknown");
        });
        model.numaNodes.sort((a, b) -> Integer.compare(a.id(), b.id()));
    }

    record Locality(int node, NumaSource source, String conflict) {}

    /** numa_node=-1 falls back to local_cpulist; a contradiction between the two is reported, keeping numa_node. */
    Locality locality(PciAddress addr, int numaAttr, BitSet local) {
        if (numaAttr >= 0) {
            BitSet own = nodeCpus.get(numaAttr);
            if (own != null && !own.isEmpty() && !local.isEmpty()) {
                BitSet outside = (BitSet) local.clone();
                outside.andNot(own);
                if (!outside.isEmpty()) {
                    String msg = addr + ": numa_node=" + numaAttr + " but local_cpulist="
                            + CpuSets.format(CpuSets.toList(local))
                            + " spans node(s) " + nodesOf(local) + " (node " + numaAttr + " has CPUs "
                            + CpuSets.format(CpuSets.toList(own)) + "); locality is contradictory, using numa_node="
                            + numaAttr;
                    model.warnings.add(msg);
                    return new Locality(numaAttr, NumaSource.NUMA_NODE, msg);
                }
            }
            return new Locality(numaAttr, NumaSource.NUMA_NODE, null);
        }
        if (nodeCpus.size() == 1) {
            return new Locality(nodeCpus.keySet().iterator().next(), NumaSource.SINGLE_NODE, null);
        }
        if (!local.isEmpty()) {
            int found = -1;
            for (Map.Entry<Integer, BitSet> e : nodeCpus.entrySet()) {
                BitSet rest = (BitSet) local.clone();
                rest.andNot(e.getValue());
                if (!e.getValue().isEmpty() && rest.isEmpty()) {
                    found = e.getKey();
                    break;
                }
            }
            if (found >= 0) {
                return new Locality(found, NumaSource.LOCAL_CPULIST, null);
            }
        }
        return new Locality(-1, NumaSource.UNKNOWN, null);
    }

    private List<Integer> nodesOf(BitSet cpus) {
        List<Integer> out = new ArrayList<>();
        nodeCpus.forEach((n, c) -> {
            if (c.intersects(cpus)) {
                out.add(n);
            }
        });
        return out;
    }
}

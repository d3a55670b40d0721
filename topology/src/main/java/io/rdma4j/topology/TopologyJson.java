package io.rdma4j.topology;

import io.rdma4j.topology.internal.JsonWriter;

/**
 * The stable JSON form of a topology (what {@code ./rdma4j topo --json} prints; tools and tests read it):
 *
 * <pre>
 * { "numaNodes": [ {"id": 0, "cpus": [0,1,...], "hasCpus": true, "memoryBytes": ..., "distances": [10,21]} ],
 *   "devices":   [ {"bdf": "0000:1a:00.0", "kind": "nic", "vendor": "15b3", "device": "1013",
 *                   "classCode": "020700", "numaNode": 0, "names": ["mlx5_0"], ...} ],
 *   "affinity":  [ {"device": "0000:1b:00.0",
 *                   "nics": [ {"bdf": "0000:1a:00.0", "level": "PXB", "climb": 1, "hops": 3,
 *                              "bandwidthGbps": 252.062, "tieGroup": 0}, ... ],
 *                   "nvme": [ {"bdf": "...", "level": "..."} ] } ],
 *   "numaAffinity": [ {"node": 0, "cpuHome": 0, "nics": [...], "nvme": [...]} ],
 *   "nvmeControllers": [...], "source": "...", "nicFilter": "...", "warnings": [...], "summary": {...} }
 * </pre>
 *
 * {@code bdf} is always {@code dddd:bb:dd.f}, lower case, at least 4 domain digits; {@code nics} and {@code nvme} are
 * sorted best first; {@code affinity} has one entry per GPU or accelerator; unknown ids and classes are {@code null}. A
 * fabrics drive whose NIC is not known has no {@code bdf} and is left out of {@code affinity} (it is still listed in
 * {@code nvmeControllers}). Fields may be added; none is removed or renamed.
 */
public final class TopologyJson {
    private TopologyJson() {}

    private static void ranked(JsonWriter w, Ranked<?> r, java.util.List<String> names, NvmeController drive) {
        w.beginObject();
        w.name("bdf").value(r.address().toString());
        w.name("level").value(r.level().name());
        w.name("climb").value(r.climb());
        w.name("hops").value(r.hops());
        w.name("bandwidthGbps").value(r.bandwidthGbps());
        w.name("tieGroup").value(r.tieGroup());
        if (names != null) {
            w.name("names").beginArray();
            names.forEach(w::value);
            w.endArray();
        }
        if (drive != null) {
            w.name("controller").value(drive.name());
            w.name("transport").value(drive.transport());
        }
        w.endObject();
    }

    /** @param summary the machine summary to include, or null */
    public static String write(Topology t, SystemSummary summary) {
        JsonWriter w = new JsonWriter();
        w.beginObject();
        w.name("numaNodes").beginArray();
        for (NumaNode n : t.numaNodes()) {
            w.beginObject();
            w.name("id").value(n.id());
            w.name("cpus").inlineInts(n.cpus());
            w.name("hasCpus").value(n.hasCpus());
            w.name("memoryBytes").value(n.memoryBytes());
            w.name("distances").inlineInts(n.distances());
            w.endObject();
        }
        w.endArray();
        w.name("devices").beginArray();
        for (PciDevice d : t.devices()) {
            w.beginObject();
            w.name("bdf").value(d.address().toString());
            w.name("kind").value(d.kind().jsonName());
            w.name("vendor").value(d.vendor() < 0 ? null : d.vendorHex());
            w.name("device").value(d.deviceId() < 0 ? null : d.deviceHex());
            w.name("classCode").value(d.classCode() < 0 ? null : d.classHex());
            w.name("numaNode").value(d.numaNode());
            w.name("numaSource").value(d.numaSource().name().toLowerCase(java.util.Locale.ROOT));
            w.name("names").beginArray();
            d.names().forEach(w::value);
            w.endArray();
            w.name("netdevs").beginArray();
            d.netdevs().forEach(w::value);
            w.endArray();
            w.name("hostBridge").value(d.hostBridge());
            w.name("path").beginArray();
            d.path().forEach(b -> w.value(b.address().toString()));
            w.endArray();
            w.name("linkGbps").value(d.link().gbps());
            if (!d.rdmaDevices().isEmpty()) {
                w.name("ports").beginArray();
                for (RdmaDevice r : d.rdmaDevices()) {
                    for (RdmaPort p : r.ports()) {
                        w.beginObject();
                        w.name("device").value(r.name());
                        w.name("port").value(p.number());
                        w.name("state").value(p.state());
                        w.name("linkLayer").value(p.linkLayer());
                        w.name("rateGbps").value(p.rateGbps());
                        w.name("netdevs").beginArray();
                        p.netdevs().forEach(w::value);
                        w.endArray();
                        w.endObject();
                    }
                }
                w.endArray();
            }
            d.localityConflict().ifPresent(c -> w.name("localityConflict").value(c));
            w.endObject();
        }
        w.endArray();
        w.name("affinity").beginArray();
        for (Affinity a : t.affinity()) {
            w.beginObject();
            w.name("device").value(a.device().address().toString());
            w.name("kind").value(a.device().kind().jsonName());
            w.name("nics").beginArray();
            a.nics().forEach(r -> ranked(w, r, r.target().names(), null));
            w.endArray();
            w.name("nvme").beginArray();
            a.nvme().stream().filter(r -> r.address() != null).forEach(r -> ranked(w, r, null, r.target()));
            w.endArray();
            w.endObject();
        }
        w.endArray();
        w.name("numaAffinity").beginArray();
        for (NumaNode n : t.numaNodes()) {
            Location l = Location.numa(n.id());
            w.beginObject();
            w.name("node").value(n.id());
            w.name("cpuHome").value(t.cpuHome(l));
            w.name("nics").beginArray();
            t.rankNics(l).forEach(r -> ranked(w, r, r.target().names(), null));
            w.endArray();
            w.name("nvme").beginArray();
            t.rankNvme(l).stream().filter(r -> r.address() != null).forEach(r -> ranked(w, r, null, r.target()));
            w.endArray();
            w.endObject();
        }
        w.endArray();
        w.name("nvmeControllers").beginArray();
        for (NvmeController c : t.nvmeControllers()) {
            w.beginObject();
            w.name("name").value(c.name());
            w.name("transport").value(c.transport());
            w.name("bdf").value(c.pci().map(PciAddress::toString).orElse(null));
            w.name("address").value(c.address());
            w.name("subsysnqn").value(c.subsysnqn());
            w.name("numaNode").value(c.numaNode());
            w.name("via").value(c.via().map(PciAddress::toString).orElse(null));
            w.endObject();
        }
        w.endArray();
        w.name("source").value(t.source());
        w.name("nicFilter").value(t.nicFilter().spec());
        w.name("warnings").beginArray();
        t.warnings().forEach(w::value);
        w.endArray();
        if (summary != null) {
            w.name("summary").beginObject();
            w.name("cpuModel").value(summary.cpuModel());
            w.name("packages").value(summary.packages());
            w.name("physicalCores").value(summary.physicalCores());
            w.name("logicalCpus").value(summary.logicalCpus());
            w.name("memoryBytes").value(summary.memoryBytes());
            w.name("source").value(summary.source());
            w.endObject();
        }
        w.endObject();
        return w.toString() + "\n";
    }
}

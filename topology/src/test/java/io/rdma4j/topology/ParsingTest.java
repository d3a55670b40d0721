package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.topology.internal.CpuSets;
import io.rdma4j.topology.internal.LinkSpeeds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Addresses, CPU sets, link speeds and malformed inputs. */
class ParsingTest {
    @TempDir
    Path tmp;

    @Test
    void pciAddressPrintsLowerCaseWithAtLeastFourDomainDigits() {
        assertEquals("0000:1a:00.0", PciAddress.parse("1A:00.0").toString());
        assertEquals("0000:1a:00.0", PciAddress.parse("0000:1a:00.0").toString());
        assertEquals("10000:00:04.0", PciAddress.parse("10000:00:04.0").toString());
        assertEquals("ffff:ff:01.0", PciAddress.parse("FFFF:FF:01.0").toString());
        assertEquals(PciAddress.parse("0001:00:00.0"), PciAddress.parse("1:00:00.0"));
    }

    @Test
    void pciAddressOrdersByDomainBusDeviceFunction() {
        List<PciAddress> l = new java.util.ArrayList<>(List.of(
                PciAddress.parse("0001:00:00.0"),
                PciAddress.parse("0000:ff:1f.7"),
                PciAddress.parse("0000:01:00.1"),
                PciAddress.parse("0000:01:00.0")));
        java.util.Collections.sort(l);
        assertEquals("[0000:01:00.0, 0000:01:00.1, 0000:ff:1f.7, 0001:00:00.0]", l.toString());
    }

    @Test
    void malformedPciAddressIsRejectedWithTheExpectedForm() {
        assertNull(PciAddress.tryParse("0000:00:20.0"));
        assertNull(PciAddress.tryParse("mlx5_0"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PciAddress.parse("00:1f.8"));
        assertTrue(e.getMessage().contains("dddd:bb:dd.f"), e.getMessage());
    }

    @Test
    void locationParsesNumaAndAddresses() {
        assertEquals(Location.numa(3), Location.parse("numa:3"));
        assertEquals(Location.device(PciAddress.parse("0000:1b:00.0")), Location.parse("1b:00.0"));
        assertThrows(IllegalArgumentException.class, () -> Location.parse("numa:x"));
        assertThrows(IllegalArgumentException.class, () -> Location.parse("gpu0"));
        assertThrows(IllegalArgumentException.class, () -> Location.numa(-1));
    }

    @Test
    void unknownDeviceLocationNamesTheGpusThatExist() {
        Topology t = Shapes.xml("ndv2.xml");
        TopologyException e = assertThrows(TopologyException.class, () -> t.rankNics("0000:99:00.0"));
        assertTrue(e.getMessage().contains("0000:99:00.0") && e.getMessage().contains("0001:00:00.0"), e.getMessage());
    }

    @Test
    void cpuListsAndMasks() {
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), CpuSets.toList(CpuSets.parseList("0-3,8,10-11")));
        assertEquals(List.of(), CpuSets.toList(CpuSets.parseList("")));
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 40), CpuSets.toList(CpuSets.parseMask("00000100,000000ff")));
        assertEquals(List.of(0, 2, 4), CpuSets.toList(CpuSets.parseMask("0x00000015")));
        assertEquals(List.of(32), CpuSets.toList(CpuSets.parseMask("0x00000001,0x00000000")));
        assertEquals("0-3,8,10-11", CpuSets.format(List.of(0, 1, 2, 3, 8, 10, 11)));
    }

    @Test
    void linkSpeedsAndBandwidth() {
        assertEquals(8.0, LinkSpeeds.gigaTransfers("8 GT/s"));
        assertEquals(32.0, LinkSpeeds.gigaTransfers("32.0 GT/s PCIe"));
        assertEquals(0.0, LinkSpeeds.gigaTransfers("Unknown speed"));
        assertEquals(400.0, LinkSpeeds.portRateGbps("400 Gb/sec (4X NDR)"));
        assertEquals(16, LinkSpeeds.width("x16"));
        assertEquals(16.0, PciLink.of(2.5, 8).gbps());
        assertEquals(252.062, PciLink.of(16, 16).gbps());
        assertEquals(32.0, PciLink.ofGigabytesPerSecond(4.0).gbps());
    }

    @Test
    void missingFsrootOrFileIsAClearError() {
        TopologyException e = assertThrows(TopologyException.class, () -> Topology.scan(tmp.resolve("nope")));
        assertTrue(e.getMessage().contains("nope"), e.getMessage());
        TopologyException e2 = assertThrows(TopologyException.class, () -> Topology.scan(tmp));
        assertTrue(e2.getMessage().contains("no sys/"), e2.getMessage());
        TopologyException e3 = assertThrows(TopologyException.class, () -> Topology.fromNcclXml(tmp.resolve("x.xml")));
        assertTrue(e3.getMessage().contains("does not exist"), e3.getMessage());
    }

    @Test
    void malformedTopologyFilesAreRejectedWithTheExpectedFormat() throws Exception {
        Path bad = Files.writeString(
                tmp.resolve("bad.xml"), "<system><cpu numaid=\"0\"><pci busid=\"zz\"/></cpu></system>");
        TopologyException e = assertThrows(TopologyException.class, () -> Topology.fromNcclXml(bad));
        assertTrue(e.getMessage().contains("zz") && e.getMessage().contains("dddd:bb:dd.f"), e.getMessage());
        Path notXml = Files.writeString(tmp.resolve("n.xml"), "<system><cpu>");
        assertThrows(TopologyException.class, () -> Topology.fromNcclXml(notXml));
        Path other = Files.writeString(tmp.resolve("o.xml"), "<html/>");
        TopologyException e2 = assertThrows(TopologyException.class, () -> Topology.fromNcclXml(other));
        assertTrue(e2.getMessage().contains("<system>"), e2.getMessage());
    }

    @Test
    void externalDtdOfATopologyFileIsNeverFetched() throws Exception {
        // hwloc files name hwloc2.dtd; a parser that fetched it would fail here (nothing listens on port 1)
        Path f = Files.writeString(
                tmp.resolve("dtd.xml"),
                "<?xml version=\"1.0\"?><!DOCTYPE system SYSTEM \"http://127.0.0.1:1/x.dtd\">"
                        + "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" class=\"0x030200\"/></cpu></system>");
        assertEquals(
                DeviceKind.GPU,
                Topology.fromNcclXml(f).device("0000:01:00.0").orElseThrow().kind());
    }

    @Test
    void dualPortNicInAVendorFileIsOneVerbsDeviceWithTwoPorts() throws Exception {
        Path f = Files.writeString(tmp.resolve("dual.xml"), """
                <system version="1"><cpu numaid="0" affinity="0000000f">
                  <pci busid="0000:17:00.0" class="0x020700" vendor="0x15b3" device="0x101b"
                       link_speed="16.0 GT/s PCIe" link_width="16">
                    <nic>
                      <net name="mlx5_0" dev="0" speed="200000" port="1"/>
                      <net name="mlx5_0" dev="1" speed="200000" port="2"/>
                    </nic>
                  </pci>
                </cpu></system>""");
        PciDevice nic = Topology.fromNcclXml(f).device("0000:17:00.0").orElseThrow();
        assertEquals(1, nic.rdmaDevices().size());
        assertEquals(List.of(1, 2), nic.ports().stream().map(RdmaPort::number).toList());
        assertEquals(200.0, nic.lineRateGbps());
        assertEquals(
                List.of(0, 1, 2, 3),
                Topology.fromNcclXml(f).numaNode(0).orElseThrow().cpus());
    }
}

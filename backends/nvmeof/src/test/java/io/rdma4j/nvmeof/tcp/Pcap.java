package io.rdma4j.nvmeof.tcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Just enough of a pcap reader and IPv4/TCP reassembler to recover the byte streams of the NVMe/TCP captures: classic
 * pcap files (either byte order, micro- or nanosecond), link types Ethernet, Linux cooked v1/v2, null/loopback and raw.
 */
final class Pcap {
    /** One direction of one TCP connection, its payload in sequence order. */
    record Stream(int srcPort, int dstPort, byte[] bytes) {}

    /** Both directions of one connection, in the order the connections started. */
    record Connection(Stream toTarget, Stream fromTarget) {}

    private Pcap() {}

    static List<Connection> connections(Path file, int targetPort) throws IOException {
        return connections(Files.readAllBytes(file), file.toString(), targetPort);
    }

    /** @param file names the capture in messages */
    static List<Connection> connections(byte[] capture, String file, int targetPort) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(capture);
        int magic = b.order(ByteOrder.LITTLE_ENDIAN).getInt(0);
        if (magic != 0xa1b2c3d4 && magic != 0xa1b23c4d) {
            b.order(ByteOrder.BIG_ENDIAN);
            magic = b.getInt(0);
            if (magic != 0xa1b2c3d4 && magic != 0xa1b23c4d) {
                throw new IOException(file + " is not a classic pcap file (magic " + Integer.toHexString(magic) + ")");
            }
        }
        ByteOrder fileOrder = b.order();
        int linkType = b.getInt(20);
        Map<String, Flow> flows = new LinkedHashMap<>();
        int off = 24;
        while (off + 16 <= b.limit()) {
            int incl = b.order(fileOrder).getInt(off + 8);
            int start = off + 16;
            off = start + incl;
            if (off > b.limit()) {
                throw new IOException(file + ": truncated packet record");
            }
            int ip = switch (linkType) {
                case 1 -> start + 14; // Ethernet (no VLAN in these captures)
                case 113 -> start + 16; // Linux cooked v1
                case 276 -> start + 20; // Linux cooked v2
                case 0 -> start + 4; // BSD null / loopback
                case 101, 228 -> start; // raw IPv4
                default -> throw new IOException("link type " + linkType + " is not supported");
            };
            if ((b.get(ip) & 0xf0) != 0x40 || b.get(ip + 9) != 6) {
                continue; // not IPv4 TCP
            }
            int ihl = (b.get(ip) & 0x0f) * 4;
            int total = Short.toUnsignedInt(b.order(ByteOrder.BIG_ENDIAN).getShort(ip + 2));
            int tcp = ip + ihl;
            int src = Short.toUnsignedInt(b.getShort(tcp));
            int dst = Short.toUnsignedInt(b.getShort(tcp + 2));
            long seq = Integer.toUnsignedLong(b.getInt(tcp + 4));
            int dataOff = (b.get(tcp + 12) >> 4 & 0xf) * 4;
            int flags = b.get(tcp + 13) & 0xff;
            int payload = tcp + dataOff;
            int len = ip + total - payload;
            Flow f = flows.computeIfAbsent(src + ">" + dst, k -> new Flow(src, dst));
            if ((flags & 0x02) != 0) {
                f.isn = seq + 1;
            }
            if (len > 0) {
                byte[] p = new byte[len];
                b.get(payload, p);
                f.segments.putIfAbsent(seq, p); // retransmissions carry the same bytes
            }
        }
        List<Connection> out = new ArrayList<>();
        for (Flow f : flows.values()) {
            if (f.dst != targetPort) {
                continue;
            }
            Flow back = flows.get(f.dst + ">" + f.src);
            out.add(new Connection(f.stream(), back == null ? new Stream(f.dst, f.src, new byte[0]) : back.stream()));
        }
        return out;
    }

    private static final class Flow {
        final int src, dst;
        long isn = -1;
        final TreeMap<Long, byte[]> segments = new TreeMap<>();

        Flow(int src, int dst) {
            this.src = src;
            this.dst = dst;
        }

        Stream stream() throws IOException {
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            long next = isn >= 0 ? isn : segments.isEmpty() ? 0 : segments.firstKey();
            for (Map.Entry<Long, byte[]> e : segments.entrySet()) {
                long s = e.getKey();
                byte[] p = e.getValue();
                if (s + p.length <= next) {
                    continue;
                }
                if (s > next) {
                    throw new IOException("gap in TCP stream " + src + ">" + dst + " at sequence " + next);
                }
                int skip = (int) (next - s);
                o.write(p, skip, p.length - skip);
                next = s + p.length;
            }
            return new Stream(src, dst, o.toByteArray());
        }
    }
}

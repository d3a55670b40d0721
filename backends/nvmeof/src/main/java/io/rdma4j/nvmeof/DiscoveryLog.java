package io.rdma4j.nvmeof;

import io.rdma4j.nvmeof.internal.Le;
import java.util.ArrayList;
import java.util.List;

/**
 * The discovery log page (log identifier 70h) of a discovery controller: one entry per subsystem port a host may
 * connect to.
 *
 * @param generation generation counter (GENCTR); changes whenever the log changes
 * @param entries every record
 */
public record DiscoveryLog(long generation, List<Entry> entries) {
    /** Size of the header and of each entry. */
    public static final int HEADER = 1024, ENTRY = 1024;

    /**
     * One discovery log entry.
     *
     * @param transportType TRTYPE: 1 RDMA, 2 Fibre Channel, 3 TCP, 254 intra-host
     * @param addressFamily ADRFAM: 1 IPv4, 2 IPv6, 3 InfiniBand, 4 FC
     * @param subsystemType SUBTYPE: 1 referral to another discovery service, 2 NVM subsystem, 3 current discovery
     *     subsystem
     * @param portId PORTID
     * @param controllerId CNTLID (0xffff dynamic)
     * @param adminMaxSqSize ASQSZ
     * @param serviceId TRSVCID, the port ("4420")
     * @param subsystemNqn SUBNQN
     * @param address TRADDR
     */
    public record Entry(
            int transportType,
            int addressFamily,
            int subsystemType,
            int treq,
            int portId,
            int controllerId,
            int adminMaxSqSize,
            String serviceId,
            String subsystemNqn,
            String address) {
        /** @return "tcp", "rdma", "fc", "loop" or the number */
        public String transportName() {
            return switch (transportType) {
                case 1 -> "rdma";
                case 2 -> "fc";
                case 3 -> "tcp";
                case 254 -> "loop";
                default -> "trtype " + transportType;
            };
        }

        /** @return "ipv4", "ipv6", "ib", "fc", "loop" or the number */
        public String addressFamilyName() {
            return switch (addressFamily) {
                case 1 -> "ipv4";
                case 2 -> "ipv6";
                case 3 -> "ib";
                case 4 -> "fc";
                case 254 -> "loop";
                default -> "adrfam " + addressFamily;
            };
        }

        /** @return "nvme", "discovery", "current discovery" or the number */
        public String subsystemTypeName() {
            return switch (subsystemType) {
                case 1 -> "discovery";
                case 2 -> "nvme";
                case 3 -> "current discovery";
                default -> "subtype " + subsystemType;
            };
        }
    }

    /** @return the number of records (NUMREC) in a log page header */
    public static long recordCount(byte[] header) {
        if (header.length < 16) {
            throw new NvmeProtocolException(
                    "discovery log header is " + header.length + " bytes; at least 16 are needed");
        }
        return Le.i64(header, 8);
    }

    /** Parses a whole discovery log page: the header and NUMREC entries. */
    public static DiscoveryLog parse(byte[] d) {
        long numrec = recordCount(d);
        if (numrec < 0 || numrec > (d.length - HEADER) / ENTRY) {
            throw new NvmeProtocolException("discovery log says " + numrec + " records, but holds room for "
                    + Math.max(0, (d.length - HEADER) / ENTRY) + " (" + d.length + " bytes)");
        }
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < numrec; i++) {
            int o = HEADER + i * ENTRY;
            entries.add(new Entry(
                    Le.u8(d, o),
                    Le.u8(d, o + 1),
                    Le.u8(d, o + 2),
                    Le.u8(d, o + 3),
                    Le.u16(d, o + 4),
                    Le.u16(d, o + 6),
                    Le.u16(d, o + 8),
                    Le.ascii(d, o + 32, 32),
                    Le.ascii(d, o + 256, 256),
                    Le.ascii(d, o + 512, 256)));
        }
        return new DiscoveryLog(Le.i64(d, 0), List.copyOf(entries));
    }
}

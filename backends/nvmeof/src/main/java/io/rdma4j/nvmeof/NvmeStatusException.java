package io.rdma4j.nvmeof;

/**
 * The controller completed a command with an error status. Carries the status code type and status code, and names both
 * as the NVMe specifications do, e.g. {@code Read (nsid=1, slba=...) failed: LBA Out of Range (SCT 0h Generic, SC
 * 80h)}.
 */
public class NvmeStatusException extends NvmeException {
    /** Status code types. */
    public static final int SCT_GENERIC = 0, SCT_COMMAND_SPECIFIC = 1, SCT_MEDIA = 2, SCT_PATH = 3, SCT_VENDOR = 7;
    /** Often tested status codes. */
    public static final int SC_INVALID_FIELD = 0x02,
            SC_INVALID_NAMESPACE = 0x0b,
            SC_LBA_OUT_OF_RANGE = 0x80,
            SC_CONNECT_INVALID_PARAMETERS = 0x82,
            SC_CONNECT_INVALID_HOST = 0x84;

    private final int sct;
    private final int sc;
    private final boolean dnr;
    private final int dw0;

    /**
     * @param command what was sent, e.g. {@code Read(nsid=1, slba=0, blocks=8)}
     * @param fabrics the command was a Fabrics command (its command-specific codes differ from I/O commands')
     */
    public NvmeStatusException(String command, boolean fabrics, int sct, int sc, boolean dnr, int dw0) {
        super(command + " failed: " + name(fabrics, sct, sc)
                + String.format(" (SCT %Xh %s, SC %02Xh%s)", sct, sctName(sct), sc, dnr ? ", do not retry" : "")
                + hint(fabrics, sct, sc, dw0));
        this.sct = sct;
        this.sc = sc;
        this.dnr = dnr;
        this.dw0 = dw0;
    }

    /** @return the status code type (SCT) */
    public int sct() {
        return sct;
    }

    /** @return the status code (SC) */
    public int sc() {
        return sc;
    }

    /** @return the Do Not Retry bit */
    public boolean doNotRetry() {
        return dnr;
    }

    /** @return completion DW0 (for a failed Connect: the invalid attribute and parameter offset) */
    public int dw0() {
        return dw0;
    }

    /** @return the name of a status code type */
    public static String sctName(int sct) {
        return switch (sct) {
            case SCT_GENERIC -> "Generic Command Status";
            case SCT_COMMAND_SPECIFIC -> "Command Specific Status";
            case SCT_MEDIA -> "Media and Data Integrity Errors";
            case SCT_PATH -> "Path Related Status";
            case SCT_VENDOR -> "Vendor Specific";
            default -> "Reserved";
        };
    }

    /** @return the specification's name of a status, or a description keeping the unknown code */
    public static String name(boolean fabrics, int sct, int sc) {
        String n = switch (sct) {
            case SCT_GENERIC ->
                switch (sc) {
                    case 0x00 -> "Successful Completion";
                    case 0x01 -> "Invalid Command Opcode";
                    case 0x02 -> "Invalid Field in Command";
                    case 0x03 -> "Command ID Conflict";
                    case 0x04 -> "Data Transfer Error";
                    case 0x05 -> "Commands Aborted due to Power Loss Notification";
                    case 0x06 -> "Internal Error";
                    case 0x07 -> "Command Abort Requested";
                    case 0x08 -> "Command Aborted due to SQ Deletion";
                    case 0x09 -> "Command Aborted due to Failed Fused Command";
                    case 0x0a -> "Command Aborted due to Missing Fused Command";
                    case 0x0b -> "Invalid Namespace or Format";
                    case 0x0c -> "Command Sequence Error";
                    case 0x0d -> "Invalid SGL Segment Descriptor";
                    case 0x0e -> "Invalid Number of SGL Descriptors";
                    case 0x0f -> "Data SGL Length Invalid";
                    case 0x10 -> "Metadata SGL Length Invalid";
                    case 0x11 -> "SGL Descriptor Type Invalid";
                    case 0x12 -> "Invalid Use of Controller Memory Buffer";
                    case 0x13 -> "PRP Offset Invalid";
                    case 0x14 -> "Atomic Write Unit Exceeded";
                    case 0x15 -> "Operation Denied";
                    case 0x16 -> "SGL Offset Invalid";
                    case 0x18 -> "Host Identifier Inconsistent Format";
                    case 0x19 -> "Keep Alive Timer Expired";
                    case 0x1a -> "Keep Alive Timeout Invalid";
                    case 0x1b -> "Command Aborted due to Preempt and Abort";
                    case 0x1c -> "Sanitize Failed";
                    case 0x1d -> "Sanitize In Progress";
                    case 0x1e -> "SGL Data Block Granularity Invalid";
                    case 0x1f -> "Command Not Supported for Queue in CMB";
                    case 0x20 -> "Namespace is Write Protected";
                    case 0x21 -> "Command Interrupted";
                    case 0x22 -> "Transient Transport Error";
                    case 0x80 -> "LBA Out of Range";
                    case 0x81 -> "Capacity Exceeded";
                    case 0x82 -> "Namespace Not Ready";
                    case 0x83 -> "Reservation Conflict";
                    case 0x84 -> "Format In Progress";
                    default -> null;
                };
            case SCT_COMMAND_SPECIFIC ->
                fabrics
                        ? switch (sc) {
                            case 0x80 -> "Connect Incompatible Format";
                            case 0x81 -> "Connect Controller Busy";
                            case 0x82 -> "Connect Invalid Parameters";
                            case 0x83 -> "Connect Restart Discovery";
                            case 0x84 -> "Connect Invalid Host";
                            case 0x85 -> "Invalid Queue Type";
                            case 0x90 -> "Discover Restart";
                            case 0x91 -> "Authentication Required";
                            default -> null;
                        }
                        : switch (sc) {
                            case 0x00 -> "Completion Queue Invalid";
                            case 0x01 -> "Invalid Queue Identifier";
                            case 0x02 -> "Invalid Queue Size";
                            case 0x03 -> "Abort Command Limit Exceeded";
                            case 0x05 -> "Asynchronous Event Request Limit Exceeded";
                            case 0x09 -> "Invalid Log Page";
                            case 0x0a -> "Invalid Format";
                            case 0x0d -> "Feature Identifier Not Saveable";
                            case 0x0e -> "Feature Not Changeable";
                            case 0x0f -> "Feature Not Namespace Specific";
                            case 0x80 -> "Conflicting Attributes";
                            case 0x81 -> "Invalid Protection Information";
                            case 0x82 -> "Attempted Write to Read Only Range";
                            case 0x83 -> "Command Size Limit Exceeded";
                            default -> null;
                        };
            case SCT_MEDIA ->
                switch (sc) {
                    case 0x80 -> "Write Fault";
                    case 0x81 -> "Unrecovered Read Error";
                    case 0x82 -> "End-to-end Guard Check Error";
                    case 0x83 -> "End-to-end Application Tag Check Error";
                    case 0x84 -> "End-to-end Reference Tag Check Error";
                    case 0x85 -> "Compare Failure";
                    case 0x86 -> "Access Denied";
                    case 0x87 -> "Deallocated or Unwritten Logical Block";
                    default -> null;
                };
            case SCT_PATH ->
                switch (sc) {
                    case 0x00 -> "Internal Path Error";
                    case 0x01 -> "Asymmetric Access Persistent Loss";
                    case 0x02 -> "Asymmetric Access Inaccessible";
                    case 0x03 -> "Asymmetric Access Transition";
                    case 0x60 -> "Controller Pathing Error";
                    case 0x70 -> "Host Pathing Error";
                    case 0x71 -> "Command Aborted By Host";
                    default -> null;
                };
            default -> null;
        };
        return n != null ? n : String.format("unknown status (SCT %Xh, SC %02Xh)", sct, sc);
    }

    private static String hint(boolean fabrics, int sct, int sc, int dw0) {
        if (sct == SCT_GENERIC && sc == 0x80) {
            return ": the LBA range reaches past the namespace's capacity (Controller.namespace(nsid).blocks())";
        }
        if (sct == SCT_GENERIC && sc == 0x0b) {
            return ": no active namespace has that NSID (Controller.activeNamespaces())";
        }
        if (fabrics && sct == SCT_COMMAND_SPECIFIC && sc == 0x82) {
            int ipo = dw0 & 0xffff;
            int iattr = dw0 >>> 16 & 0xff;
            String field = (iattr & 1) != 0
                    ? switch (ipo) {
                        case 16 -> "CNTLID";
                        case 256 -> "SUBNQN: the target has no subsystem of that NQN (see nvme discover)";
                        case 512 -> "HOSTNQN: the subsystem does not allow this host";
                        default -> "data byte " + ipo;
                    }
                    : "command byte " + ipo;
            return ": invalid " + field;
        }
        if (fabrics && sct == SCT_COMMAND_SPECIFIC && sc == 0x84) {
            return ": the subsystem does not allow this host NQN; add it to the subsystem's allowed hosts";
        }
        return "";
    }
}

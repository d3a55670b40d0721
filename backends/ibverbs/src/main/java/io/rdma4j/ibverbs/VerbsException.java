package io.rdma4j.ibverbs;

import io.rdma4j.NativeCallException;
import io.rdma4j.ffi.Libc;
import io.rdma4j.ibverbs.ffi.VerbsH;

/**
 * A verbs call failed with an errno, or a work completion carried an error status. Messages read like
 * {@code ibv_reg_mr_iova2(len=1048576) failed: error 12 (Cannot allocate memory). Raise the locked-memory limit...} or
 * {@code ibv_poll_cq(wr_id=7, opcode=RDMA_WRITE, qp_num=17) failed: error 10 (IBV_WC_REM_ACCESS_ERR: remote access
 * error)}.
 */
public class VerbsException extends NativeCallException {
    private final int wcStatus;

    /** A call that failed with {@code errno}. */
    public VerbsException(String function, String args, int errno) {
        super(function, args, errno, Libc.strerror(errno), hint(function, errno));
        this.wcStatus = -1;
    }

    private VerbsException(String args, int status, String text) {
        super(
                "ibv_poll_cq",
                args,
                status,
                text,
                status == VerbsH.IBV_WC_WR_FLUSH_ERR
                        ? "The queue pair is in the error state (an earlier request failed): rebuild it"
                        : "");
        this.wcStatus = status;
    }

    /** An exception for a work completion with an error status. */
    public static VerbsException ofCompletion(long wrId, int status, int opcode, int vendorErr, int qpNum) {
        return new VerbsException(
                "wr_id=" + wrId + ", opcode=" + wcOpcodeName(opcode) + ", qp_num=" + qpNum + ", vendor_err="
                        + vendorErr,
                status,
                wcStatusName(status) + ": " + wcStatusText(status));
    }

    /** @return the completion status ({@code IBV_WC_*}) when this came from a work completion, else -1 */
    public int wcStatus() {
        return wcStatus;
    }

    /**
     * The C name of a work completion status, e.g. {@code IBV_WC_REM_ACCESS_ERR}; unknown values read
     * {@code IBV_WC_STATUS_<n>}.
     */
    public static String wcStatusName(int status) {
        return status >= 0 && status < VerbsH.WC_STATUS_NAMES.size()
                ? VerbsH.WC_STATUS_NAMES.get(status)
                : "IBV_WC_STATUS_" + status;
    }

    /** libibverbs' text for a completion status ({@code ibv_wc_status_str}), or the name when the library is absent. */
    public static String wcStatusText(int status) {
        try {
            return Native.string((java.lang.foreign.MemorySegment)
                    io.rdma4j.ibverbs.ffi.LibIbverbs.ibv_wc_status_str.handle().invokeExact(status));
        } catch (Throwable t) {
            return wcStatusName(status);
        }
    }

    static String wcOpcodeName(int opcode) {
        return switch (opcode) {
            case VerbsH.IBV_WC_SEND -> "SEND";
            case VerbsH.IBV_WC_RDMA_WRITE -> "RDMA_WRITE";
            case VerbsH.IBV_WC_RDMA_READ -> "RDMA_READ";
            case VerbsH.IBV_WC_COMP_SWAP -> "COMP_SWAP";
            case VerbsH.IBV_WC_FETCH_ADD -> "FETCH_ADD";
            case VerbsH.IBV_WC_RECV -> "RECV";
            case VerbsH.IBV_WC_RECV_RDMA_WITH_IMM -> "RECV_RDMA_WITH_IMM";
            default -> Integer.toString(opcode);
        };
    }

    private static String hint(String function, int errno) {
        return switch (errno) {
            case 12 ->
                function.startsWith("ibv_reg")
                        ? "Raise the locked-memory limit (ulimit -l unlimited, or LimitMEMLOCK=infinity for a service)"
                        : "The device or the locked-memory limit (ulimit -l) is exhausted: ask for fewer resources";
            case 19, 38 ->
                "No RDMA device is usable: load a driver (for Soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IFACE)";
            case 1, 13 -> "Permission denied on /dev/infiniband: run with access to the uverbs devices";
            case 22 ->
                function.equals("ibv_modify_qp")
                        ? "An attribute or the attribute mask does not fit this state transition"
                        : "An argument is invalid for this device";
            case 11 -> "The resource is busy or the queue is full: retry later";
            default -> "";
        };
    }
}

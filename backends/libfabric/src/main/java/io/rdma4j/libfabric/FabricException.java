package io.rdma4j.libfabric;

import io.rdma4j.NativeCallException;
import io.rdma4j.libfabric.ffi.Fi;

/**
 * A libfabric call failed. {@link #fiErrno()} is the positive {@code FI_*} code (libfabric returns it negated); the
 * message carries {@code fi_strerror}'s text, e.g. {@code fi_mr_reg(len=4096) failed: error 22 (Invalid argument)}.
 */
public class FabricException extends NativeCallException {
    public FabricException(String function, String args, int fiErrno, String hint) {
        super(function, args, fiErrno, text(fiErrno), hint);
    }

    /** @return the positive {@code FI_*} error code */
    public int fiErrno() {
        return code();
    }

    /** For a negative libfabric return value {@code rc}. */
    static FabricException of(String function, String args, long rc, String hint) {
        return new FabricException(function, args, (int) -rc, hint);
    }

    /** {@code fi_strerror}'s text for a positive code, or a plain text when libfabric is not loaded. */
    static String text(int fiErrno) {
        return Fi.LIB.isAvailable() ? Fi.strerror(fiErrno) : "libfabric error " + fiErrno;
    }
}

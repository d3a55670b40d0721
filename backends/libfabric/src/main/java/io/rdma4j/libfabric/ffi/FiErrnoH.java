package io.rdma4j.libfabric.ffi;

/** {@code <rdma/fi_errno.h>}: the error codes this binding acts on (libfabric returns them negated). */
public final class FiErrnoH {
    private FiErrnoH() {}

    public static final int FI_SUCCESS = 0;
    /** {@code #define FI_EAGAIN EAGAIN}: resources are busy, progress and retry. */
    public static final int FI_EAGAIN = 11;

    public static final int FI_ENOMEM = 12;
    public static final int FI_EBUSY = 16;
    public static final int FI_EINVAL = 22;
    public static final int FI_ENOSYS = 38;
    public static final int FI_ENODATA = 61;
    public static final int FI_EOPNOTSUPP = 95;
    public static final int FI_ECANCELED = 125;
    public static final int FI_EKEYREJECTED = 129;
    public static final int FI_EOTHER = 256;
    public static final int FI_ETOOSMALL = 257;
    public static final int FI_EOPBADSTATE = 258;
    /** Error available: read it with {@code fi_cq_readerr}. */
    public static final int FI_EAVAIL = 259;

    public static final int FI_ETRUNC = 265;
    public static final int FI_ENOKEY = 266;
}

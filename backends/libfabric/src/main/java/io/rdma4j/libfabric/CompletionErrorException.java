package io.rdma4j.libfabric;

/**
 * An operation completed in error ({@code fi_cq_readerr}): a wrong remote key, a remote range the target did not
 * register, a peer that went away. Carries the operation's context, so the caller knows which one failed, and the
 * provider's own text for its error ({@code fi_cq_strerror}).
 */
public final class CompletionErrorException extends FabricException {
    private final long context;
    private final long flags;
    private final int providerErrno;
    private final String providerText;

    CompletionErrorException(long context, long flags, int err, int providerErrno, String providerText) {
        super(
                "fi_cq_readerr",
                "context=" + context + ", flags=" + Completions.flagsToString(flags),
                err,
                "provider error " + providerErrno + ": " + providerText);
        this.context = context;
        this.flags = flags;
        this.providerErrno = providerErrno;
        this.providerText = providerText;
    }

    /** @return the context the failed operation was posted with */
    public long context() {
        return context;
    }

    /** @return the completion flags ({@code FI_RMA | FI_WRITE}...) */
    public long flags() {
        return flags;
    }

    /** @return the provider-specific error number */
    public int providerErrno() {
        return providerErrno;
    }

    /** @return the provider's text for {@link #providerErrno()} */
    public String providerText() {
        return providerText;
    }
}

package io.rdma4j.rendezvous;

/** The transport of a lane ({@code rdma4j.v1.Backend}). Lanes of backends this version does not know are skipped, not rejected. */
public enum Backend {
    /** libibverbs RC; endpoint bytes are a 28-byte {@link QpInfo}. */
    IBVERBS,
    /** libfabric; endpoint bytes are the {@code fi_getname} address, {@link LaneInfo#provider()} names the provider. */
    LIBFABRIC
}

package io.rdma4j.rendezvous;

import java.util.Locale;

/**
 * The transport of a lane as the deprecated {@code rdma4j.v1.Backend} enum names it. A lane's identity is its
 * {@link LaneInfo#backendId()}; this enum remains for peers older than that field. Lanes of backends this version does
 * not know are skipped, not rejected.
 */
public enum Backend {
    /** libibverbs RC; endpoint bytes are a 28-byte {@link QpInfo}. */
    IBVERBS,
    /** libfabric; endpoint bytes are the {@code fi_getname} address, {@link LaneInfo#provider()} names the provider. */
    LIBFABRIC,
    /** Any other backend, named only by {@link LaneInfo#backendId()}. */
    OTHER;

    /** @return the backend id this value stands for ({@code ibverbs}, {@code libfabric}), {@code null} for OTHER */
    public String id() {
        return this == OTHER ? null : name().toLowerCase(Locale.ROOT);
    }

    /** @return the value for backend id {@code id}: IBVERBS, LIBFABRIC, or OTHER for any other id */
    public static Backend forId(String id) {
        return switch (id) {
            case "ibverbs" -> IBVERBS;
            case "libfabric" -> LIBFABRIC;
            default -> OTHER;
        };
    }
}

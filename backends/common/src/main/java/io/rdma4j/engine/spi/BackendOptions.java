package io.rdma4j.engine.spi;

/**
 * Settings the engine passes to a backend beyond lanes and depth. Each is optional ({@code null}: the backend's
 * default) and says which backends read it; a backend ignores the ones it does not read. The engine's builder fills
 * them ({@code TransferEngine.Builder.nicFilter(...)} sets {@link #nicFilter}).
 *
 * @param nicFilter which NICs to open, in NCCL_IB_HCA's syntax as {@code io.rdma4j.topology.NicFilter} parses it:
 *     comma-separated name prefixes ({@code mlx5}), {@code =} for exact names ({@code =mlx5_0}), a leading {@code ^} to
 *     exclude the listed ones instead, {@code :port} to name a port (both backends use port 1). Read by libfabric
 *     (matched against the provider's domain names, e.g. {@code lo}, {@code efa_0}) and ibverbs (matched against device
 *     names, e.g. {@code mlx5_0})
 * @param sourceAddress the local IP address libfabric's socket providers ({@code tcp}, {@code udp}, {@code sockets})
 *     bind their endpoints to; without it {@code RDMA4J_FI_SOURCE_ADDRESS}, else {@code 127.0.0.1}. Read by libfabric
 *     only
 * @param device the one RDMA device to open ({@code mlx5_0}, {@code rxe0}); without it every device with an active
 *     port. Read by ibverbs only (which also takes {@link BackendConfig#provider()} as the device when this is absent)
 */
public record BackendOptions(String nicFilter, String sourceAddress, String device) {
    /** No option set: every backend's defaults. */
    public static final BackendOptions DEFAULTS = new BackendOptions(null, null, null);

    public BackendOptions {
        nicFilter = blankToNull(nicFilter);
        sourceAddress = blankToNull(sourceAddress);
        device = blankToNull(device);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }

    /** {@return these options with {@link #nicFilter} replaced} */
    public BackendOptions withNicFilter(String filter) {
        return new BackendOptions(filter, sourceAddress, device);
    }

    /** {@return these options with {@link #sourceAddress} replaced} */
    public BackendOptions withSourceAddress(String address) {
        return new BackendOptions(nicFilter, address, device);
    }

    /** {@return these options with {@link #device} replaced} */
    public BackendOptions withDevice(String name) {
        return new BackendOptions(nicFilter, sourceAddress, name);
    }
}

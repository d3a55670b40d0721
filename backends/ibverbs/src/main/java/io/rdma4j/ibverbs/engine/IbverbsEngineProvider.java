package io.rdma4j.ibverbs.engine;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import io.rdma4j.ibverbs.Context;
import io.rdma4j.ibverbs.DeviceList;
import io.rdma4j.ibverbs.Verbs;
import io.rdma4j.topology.NicFilter;
import java.util.ArrayList;
import java.util.List;

/** Finds the ibverbs backend through {@link java.util.ServiceLoader}: available when a device has an active port. */
public final class IbverbsEngineProvider implements EngineBackendProvider {
    @Override
    public String name() {
        return "ibverbs";
    }

    /** Above libfabric's sockets-style providers: where verbs devices exist they are the fast path. */
    @Override
    public int priority() {
        return 100;
    }

    @Override
    public boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    @Override
    public String unavailabilityCause() {
        try {
            if (!Verbs.isAvailable()) {
                return "libibverbs is not available (" + Verbs.unavailabilityCause()
                        + "): apt-get install libibverbs1 ibverbs-providers";
            }
            return activeDevices(null).isEmpty()
                    ? "no RDMA device with an active port: install the NIC's driver, or for Soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IFACE"
                    : null;
        } catch (RuntimeException e) {
            return "probing RDMA devices failed: " + e.getMessage();
        }
    }

    /**
     * {@return the devices of {@code active} that {@code filter} lets through: {@link NicFilter}'s rules (NCCL_IB_HCA's
     * prefix, {@code =} exact, {@code ^} exclude), on port 1, the port this backend uses}
     */
    static List<String> select(List<String> active, NicFilter filter) {
        return active.stream()
                .filter(d -> filter.allows(d, IbverbsEngineBackend.PORT))
                .toList();
    }

    /** Names of devices whose port 1 is ACTIVE, optionally only {@code only}. */
    static List<String> activeDevices(String only) {
        List<String> out = new ArrayList<>();
        try (DeviceList list = DeviceList.open()) {
            for (DeviceList.Device d : list.devices()) {
                if (only != null && !only.equals(d.name())) {
                    continue;
                }
                try (Context c = d.open()) {
                    if (c.queryPort(1).isActive()) {
                        out.add(d.name());
                    }
                }
            }
        }
        return out;
    }

    /**
     * Opens every device with an active port that the NIC filter lets through (or the one named by
     * {@link io.rdma4j.engine.spi.BackendOptions#device()} or {@code config.provider()}).
     */
    @Override
    public EngineBackend open(BackendConfig config) {
        Verbs.ensureAvailable();
        String only = config.options().device() != null ? config.options().device() : config.provider();
        List<String> active = activeDevices(only);
        List<String> devices = select(active, NicFilter.parse(config.options().nicFilter()));
        if (devices.isEmpty() && !active.isEmpty()) {
            throw new io.rdma4j.BackendUnavailableException(
                    "ibverbs: the NIC filter '" + config.options().nicFilter()
                            + "' excludes every device with an active port " + active,
                    null);
        }
        if (devices.isEmpty()) {
            throw new io.rdma4j.BackendUnavailableException(
                    "ibverbs: no RDMA device with an active port" + (only == null ? "" : " named " + only) + " (found "
                            + Verbs.deviceNames() + ")",
                    null);
        }
        return new IbverbsEngineBackend(devices, config);
    }
}

package io.rdma4j.ibverbs.engine;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import io.rdma4j.ibverbs.Context;
import io.rdma4j.ibverbs.DeviceList;
import io.rdma4j.ibverbs.Verbs;
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
                return "libibverbs is not available (" + Verbs.unavailabilityCause() + "): apt-get install libibverbs1 ibverbs-providers";
            }
            return activeDevices(null).isEmpty()
                    ? "no RDMA device with an active port: install the NIC's driver, or for Soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IFACE"
                    : null;
        } catch (RuntimeException e) {
            return "probing RDMA devices failed: " + e.getMessage();
        }
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

    /** Opens every device with an active port (or the one named by {@link io.rdma4j.engine.spi.BackendOptions#device()} or {@code config.provider()}). */
    @Override
    public EngineBackend open(BackendConfig config) {
        Verbs.ensureAvailable();
        String only = config.options().device() != null ? config.options().device() : config.provider();
        List<String> devices = activeDevices(only);
        if (devices.isEmpty()) {
            throw new io.rdma4j.BackendUnavailableException("ibverbs: no RDMA device with an active port" + (only == null ? "" : " named " + only)
                    + " (found " + Verbs.deviceNames() + ")", null);
        }
        return new IbverbsEngineBackend(devices, config);
    }
}

package io.rdma4j.nvmeof.rdma;

import io.rdma4j.ibverbs.Verbs;
import io.rdma4j.ibverbs.cm.CmEvent;
import io.rdma4j.ibverbs.cm.EventChannel;
import io.rdma4j.nvmeof.NvmeConnectionException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The steps of an NVMe/RDMA connection's set-up that come before a queue exists: whether this host can do NVMe/RDMA at
 * all, resolving the target's address, and waiting for each RDMA-CM event in turn with a message that says what was
 * being done. Stateless; {@link RdmaQueue#open} runs them.
 */
final class CmSetup {
    private CmSetup() {}

    static void requireRdma(String target) {
        if (!Verbs.isAvailable() || !Verbs.isRdmaCmAvailable()) {
            Throwable cause = Verbs.unavailabilityCause();
            throw new NvmeConnectionException(
                    "NVMe/RDMA to " + target + " needs libibverbs and librdmacm, which did not load"
                            + (cause == null ? "" : " (" + cause.getMessage() + ")")
                            + ": install rdma-core (apt-get install rdma-core ibverbs-providers"
                            + " librdmacm1), or connect over NVMe/TCP (--tcp, Target.tcp)",
                    cause);
        }
        if (Verbs.deviceNames().isEmpty()) {
            throw new NvmeConnectionException(
                    "NVMe/RDMA to " + target + ": this host has no RDMA device (ibv_get_device_list is empty):"
                            + " add one (a NIC with RDMA, or Soft-RoCE: rdma link add rxe0 type rxe netdev eth0), or connect over NVMe/TCP"
                            + " (--tcp, Target.tcp)");
        }
    }

    /** Waits up to {@code ms} for the next RDMA-CM event and checks it is {@code type}. */
    static void expect(EventChannel ch, int type, long ms, String name, String doing) {
        CmEvent e = ch.poll(ms);
        if (e == null) {
            throw new NvmeConnectionException(name + ": no RDMA-CM event within " + ms + " ms while " + doing);
        }
        if (e.type() != type) {
            throw new NvmeConnectionException(name + ": " + e.name() + " (status " + e.status() + ") while " + doing);
        }
    }

    /** @return the target's IPv4 socket address (RDMA-CM here speaks IPv4) */
    static InetSocketAddress resolve(String host, int port) {
        InetAddress a;
        try {
            a = InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new NvmeConnectionException(
                    "NVMe/RDMA target host '" + host + "' does not resolve: " + e.getMessage(), e);
        }
        if (!(a instanceof Inet4Address)) {
            throw new NvmeConnectionException("NVMe/RDMA target " + host + " resolves to " + a.getHostAddress()
                    + "; this host's RDMA-CM binding speaks IPv4: give the target's IPv4 address");
        }
        return new InetSocketAddress(a, port);
    }
}

package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.DOMAIN_CQ_DATA_SIZE;
import static io.rdma4j.libfabric.ffi.FabricH.DOMAIN_DATA_PROGRESS;
import static io.rdma4j.libfabric.ffi.FabricH.DOMAIN_MR_KEY_SIZE;
import static io.rdma4j.libfabric.ffi.FabricH.DOMAIN_MR_MODE;
import static io.rdma4j.libfabric.ffi.FabricH.DOMAIN_NAME;
import static io.rdma4j.libfabric.ffi.FabricH.DOMAIN_THREADING;
import static io.rdma4j.libfabric.ffi.FabricH.EP_MAX_MSG_SIZE;
import static io.rdma4j.libfabric.ffi.FabricH.EP_TYPE;
import static io.rdma4j.libfabric.ffi.FabricH.FABRIC_API_VERSION;
import static io.rdma4j.libfabric.ffi.FabricH.FABRIC_NAME;
import static io.rdma4j.libfabric.ffi.FabricH.FABRIC_PROV_NAME;
import static io.rdma4j.libfabric.ffi.FabricH.FABRIC_PROV_VERSION;
import static io.rdma4j.libfabric.ffi.FabricH.FI_EP_DGRAM;
import static io.rdma4j.libfabric.ffi.FabricH.FI_EP_MSG;
import static io.rdma4j.libfabric.ffi.FabricH.FI_EP_RDM;
import static io.rdma4j.libfabric.ffi.FabricH.FI_EP_UNSPEC;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_LOCAL;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_PROV_KEY;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_VIRT_ADDR;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_ADDR_FORMAT;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_CAPS;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_DOMAIN_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_EP_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_FABRIC_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_MODE;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_RX_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_SRC_ADDRLEN;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_TX_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.RX_SIZE;
import static io.rdma4j.libfabric.ffi.FabricH.TX_INJECT_SIZE;
import static io.rdma4j.libfabric.ffi.FabricH.TX_IOV_LIMIT;
import static io.rdma4j.libfabric.ffi.FabricH.TX_RMA_IOV_LIMIT;
import static io.rdma4j.libfabric.ffi.FabricH.TX_SIZE;

import io.rdma4j.ClosedException;
import io.rdma4j.libfabric.ffi.Fi;

/**
 * One match of {@code fi_getinfo}: a provider on a fabric and domain, with the attributes a user of the raw layer acts
 * on. The values are copied out of the native {@code struct fi_info}, so they stay readable after the {@link InfoList}
 * is closed; {@link Fabric#open(Info)} needs the list still open.
 */
public final class Info {
    private final InfoList list;
    private final long address;
    private final String provider;
    private final int providerVersion;
    private final int apiVersion;
    private final String fabric;
    private final String domain;
    private final int endpointType;
    private final long caps;
    private final long mode;
    private final int addrFormat;
    private final long srcAddrLen;
    private final int mrMode;
    private final long maxMsgSize;
    private final long injectSize;
    private final long cqDataSize;
    private final long mrKeySize;
    private final long txSize;
    private final long iovLimit;
    private final long rmaIovLimit;
    private final long rxSize;
    private final int dataProgress;
    private final int threading;

    Info(InfoList list, long address) {
        this.list = list;
        this.address = address;
        long tx = Fi.getLong(address + INFO_TX_ATTR);
        long rx = Fi.getLong(address + INFO_RX_ATTR);
        long ep = Fi.getLong(address + INFO_EP_ATTR);
        long dom = Fi.getLong(address + INFO_DOMAIN_ATTR);
        long fab = Fi.getLong(address + INFO_FABRIC_ATTR);
        this.caps = Fi.getLong(address + INFO_CAPS);
        this.mode = Fi.getLong(address + INFO_MODE);
        this.addrFormat = Fi.getInt(address + INFO_ADDR_FORMAT);
        this.srcAddrLen = Fi.getLong(address + INFO_SRC_ADDRLEN);
        this.provider = fab == 0 ? null : Fi.getString(fab + FABRIC_PROV_NAME);
        this.providerVersion = fab == 0 ? 0 : Fi.getInt(fab + FABRIC_PROV_VERSION);
        this.apiVersion = fab == 0 ? 0 : Fi.getInt(fab + FABRIC_API_VERSION);
        this.fabric = fab == 0 ? null : Fi.getString(fab + FABRIC_NAME);
        this.domain = dom == 0 ? null : Fi.getString(dom + DOMAIN_NAME);
        this.mrMode = dom == 0 ? 0 : Fi.getInt(dom + DOMAIN_MR_MODE);
        this.mrKeySize = dom == 0 ? 0 : Fi.getLong(dom + DOMAIN_MR_KEY_SIZE);
        this.cqDataSize = dom == 0 ? 0 : Fi.getLong(dom + DOMAIN_CQ_DATA_SIZE);
        this.dataProgress = dom == 0 ? 0 : Fi.getInt(dom + DOMAIN_DATA_PROGRESS);
        this.threading = dom == 0 ? 0 : Fi.getInt(dom + DOMAIN_THREADING);
        this.endpointType = ep == 0 ? 0 : Fi.getInt(ep + EP_TYPE);
        this.maxMsgSize = ep == 0 ? 0 : Fi.getLong(ep + EP_MAX_MSG_SIZE);
        this.injectSize = tx == 0 ? 0 : Fi.getLong(tx + TX_INJECT_SIZE);
        this.txSize = tx == 0 ? 0 : Fi.getLong(tx + TX_SIZE);
        this.iovLimit = tx == 0 ? 0 : Fi.getLong(tx + TX_IOV_LIMIT);
        this.rmaIovLimit = tx == 0 ? 0 : Fi.getLong(tx + TX_RMA_IOV_LIMIT);
        this.rxSize = rx == 0 ? 0 : Fi.getLong(rx + RX_SIZE);
    }

    /** The native {@code struct fi_info *}; valid while the list is open. */
    long address() {
        if (!list.isOpen()) {
            throw new ClosedException("the InfoList this Info came from");
        }
        return address;
    }

    /** @return provider name, e.g. {@code shm}, {@code tcp;ofi_rxm}, {@code efa}, {@code verbs;ofi_rxm} */
    public String provider() {
        return provider;
    }

    /** @return the provider's version, {@code (major << 16) | minor} */
    public int providerVersion() {
        return providerVersion;
    }

    /**
     * @return the provider version as text: libfabric's own providers encode {@code FI_VERSION(major * 100 + minor,
     *     revision * 10)}, shown as {@code 1.17.0}; others as {@code major.minor}
     */
    public String providerVersionString() {
        int major = providerVersion >>> 16;
        int minor = providerVersion & 0xffff;
        return major >= 100 ? (major / 100) + "." + (major % 100) + "." + (minor / 10) : major + "." + minor;
    }

    public int apiVersion() {
        return apiVersion;
    }

    /** @return fabric name, e.g. {@code 127.0.0.1/32} or {@code shm} */
    public String fabric() {
        return fabric;
    }

    /** @return domain name, e.g. {@code lo} or {@code shm} */
    public String domain() {
        return domain;
    }

    /** @return {@code FI_EP_RDM} (3), {@code FI_EP_MSG} (1), {@code FI_EP_DGRAM} (2) */
    public int endpointType() {
        return endpointType;
    }

    public long caps() {
        return caps;
    }

    /** @return mode bits the provider requires of the application ({@code FI_CONTEXT}...) */
    public long mode() {
        return mode;
    }

    /** @return address format of endpoint names ({@code FI_SOCKADDR_IN}, {@code FI_ADDR_STR}...) */
    public int addrFormat() {
        return addrFormat;
    }

    /** @return length of the source address the provider reported, 0 when none */
    public long srcAddrLen() {
        return srcAddrLen;
    }

    /**
     * @return the memory-registration mode the provider asks for ({@code FI_MR_*} bits; 0 is offset addressing with
     *     requested keys)
     */
    public int mrMode() {
        return mrMode;
    }

    public boolean requiresLocalRegistration() {
        return (mrMode & FI_MR_LOCAL) != 0;
    }

    /** @return true when remote addresses are virtual addresses, false when they are offsets into the region */
    public boolean virtualAddressing() {
        return (mrMode & FI_MR_VIRT_ADDR) != 0;
    }

    /**
     * @return true when the provider chooses keys ({@code FI_MR_PROV_KEY}), false when the application requests them
     */
    public boolean providerKeys() {
        return (mrMode & FI_MR_PROV_KEY) != 0;
    }

    public long maxMsgSize() {
        return maxMsgSize;
    }

    /** @return the largest payload {@link Endpoint#inject} and {@link Endpoint#injectWrite} accept */
    public long injectSize() {
        return injectSize;
    }

    /** @return bytes of remote CQ data a {@link Endpoint#writeData} carries */
    public long cqDataSize() {
        return cqDataSize;
    }

    /** @return size of a memory key in bytes */
    public long mrKeySize() {
        return mrKeySize;
    }

    /** @return transmit queue depth */
    public long txSize() {
        return txSize;
    }

    /** @return the most local buffers one transmit operation takes ({@code tx_attr->iov_limit}) */
    public long iovLimit() {
        return iovLimit;
    }

    /** @return the most remote ranges one RMA operation takes ({@code tx_attr->rma_iov_limit}) */
    public long rmaIovLimit() {
        return rmaIovLimit;
    }

    /** @return receive queue depth */
    public long rxSize() {
        return rxSize;
    }

    /** @return {@code FI_PROGRESS_MANUAL} (2) or {@code FI_PROGRESS_AUTO} (1) for data transfers */
    public int dataProgress() {
        return dataProgress;
    }

    public int threading() {
        return threading;
    }

    /** @return a readable mr_mode, e.g. {@code FI_MR_LOCAL|FI_MR_VIRT_ADDR} or {@code 0 (offsets, requested keys)} */
    public static String mrModeToString(int mrMode) {
        if (mrMode == 0) {
            return "0 (offsets, requested keys)";
        }
        StringBuilder sb = new StringBuilder();
        String[] names = {
            "FI_MR_BASIC",
            "FI_MR_SCALABLE",
            "FI_MR_LOCAL",
            "FI_MR_RAW",
            "FI_MR_VIRT_ADDR",
            "FI_MR_ALLOCATED",
            "FI_MR_PROV_KEY",
            "FI_MR_MMU_NOTIFY",
            "FI_MR_RMA_EVENT",
            "FI_MR_ENDPOINT",
            "FI_MR_HMEM",
            "FI_MR_COLLECTIVE"
        };
        for (int i = 0; i < names.length; i++) {
            if ((mrMode & (1 << i)) != 0) {
                sb.append(sb.isEmpty() ? "" : "|").append(names[i]);
            }
        }
        int rest = mrMode & ~((1 << names.length) - 1);
        if (rest != 0) {
            sb.append(sb.isEmpty() ? "" : "|").append("0x").append(Integer.toHexString(rest));
        }
        return sb.toString();
    }

    /** @return {@code FI_EP_RDM} and the like */
    public static String endpointTypeToString(int type) {
        return switch (type) {
            case FI_EP_UNSPEC -> "FI_EP_UNSPEC";
            case FI_EP_MSG -> "FI_EP_MSG";
            case FI_EP_DGRAM -> "FI_EP_DGRAM";
            case FI_EP_RDM -> "FI_EP_RDM";
            case 4 -> "FI_EP_SOCK_STREAM";
            case 5 -> "FI_EP_SOCK_DGRAM";
            default -> "ep_type " + type;
        };
    }

    @Override
    public String toString() {
        return provider + " " + providerVersionString() + " fabric=" + fabric + " domain=" + domain
                + " " + endpointTypeToString(endpointType) + " mr_mode=" + mrModeToString(mrMode) + " max_msg_size="
                + Long.toUnsignedString(maxMsgSize)
                + " inject_size=" + injectSize + " cq_data_size=" + cqDataSize + " mr_key_size=" + mrKeySize;
    }
}

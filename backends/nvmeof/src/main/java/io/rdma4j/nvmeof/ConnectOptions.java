package io.rdma4j.nvmeof;

import java.net.InetAddress;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * How {@link Controller#connect} sets up a controller. Immutable; {@code with...} methods return a copy.
 *
 * @param identity host NQN and host ID; null takes {@link HostIdentity#persistent()}
 * @param ioQueues I/O queues to create (fewer if the controller grants fewer)
 * @param queueDepth entries per I/O queue (fewer if CAP.MQES is smaller); also the most commands in flight per queue
 * @param keepAlive keep-alive timeout (KATO) sent in Connect; keep-alives go out at half of it; zero disables
 * @param headerDigest ask for NVMe/TCP header digests
 * @param dataDigest ask for NVMe/TCP data digests
 * @param connectTimeout for the TCP connect, ICResp and each bring-up step
 * @param ioTimeout a command without a completion after this long resets its connection; zero waits forever
 * @param sourceAddress local address of the NIC to leave by (TCP binds to it, RDMA-CM resolves from it); null lets the
 *     kernel's route choose
 * @param polledQueues further I/O queues to reserve at bring-up for {@link Controller#openPolledQueue}: each is
 *     connected only when opened (the number of queues is negotiated once per controller)
 * @param polledIo over NVMe/TCP, run each I/O queue on the polled data path with one thread of its own (see
 *     {@code DrivenTcpQueue}, the default) instead of a reader and a writer thread; the API and its behaviour are the
 *     same. About three times the IOPS at queue depth 32 on one core, and the same or better elsewhere
 *     ({@code perf/README.md})
 * @param busyPoll on the polled data path, how long a queue's thread with commands in flight keeps polling its
 *     connection after it last found work, before it sleeps until the socket or a submitter wakes it; zero (the
 *     default) sleeps at once. Polling answers sooner than a wake-up from sleep (about the latency of SPDK's initiator,
 *     which always polls), but the thread holds its core meanwhile: turn it on where queue threads have cores to
 *     themselves, or where callers send their next command from the completion callback
 */
public record ConnectOptions(
        HostIdentity identity,
        int ioQueues,
        int queueDepth,
        Duration keepAlive,
        boolean headerDigest,
        boolean dataDigest,
        Duration connectTimeout,
        Duration ioTimeout,
        InetAddress sourceAddress,
        int polledQueues,
        boolean polledIo,
        Duration busyPoll) {
    /** Whether I/O queues run on the polled data path unless asked otherwise ({@link #withPolledIo}). */
    public static final boolean DEFAULT_POLLED_IO = true;

    /** Options leaving by the kernel's route, with one polled queue reserved. */
    public ConnectOptions(
            HostIdentity identity,
            int ioQueues,
            int queueDepth,
            Duration keepAlive,
            boolean headerDigest,
            boolean dataDigest,
            Duration connectTimeout,
            Duration ioTimeout) {
        this(identity, ioQueues, queueDepth, keepAlive, headerDigest, dataDigest, connectTimeout, ioTimeout, null);
    }

    /** Options with one polled queue reserved. */
    public ConnectOptions(
            HostIdentity identity,
            int ioQueues,
            int queueDepth,
            Duration keepAlive,
            boolean headerDigest,
            boolean dataDigest,
            Duration connectTimeout,
            Duration ioTimeout,
            InetAddress sourceAddress) {
        this(
                identity,
                ioQueues,
                queueDepth,
                keepAlive,
                headerDigest,
                dataDigest,
                connectTimeout,
                ioTimeout,
                sourceAddress,
                1,
                DEFAULT_POLLED_IO,
                Duration.ZERO);
    }

    public ConnectOptions {
        if (ioQueues < 1 || ioQueues > 65535) {
            throw new IllegalArgumentException("ioQueues " + ioQueues + " is outside 1..65535");
        }
        if (polledQueues < 0 || ioQueues + polledQueues > 65535) {
            throw new IllegalArgumentException(
                    "polledQueues " + polledQueues + " is negative or takes the queues past 65535");
        }
        if (queueDepth < 2 || queueDepth > 65535) {
            throw new IllegalArgumentException("queueDepth " + queueDepth + " is outside 2..65535");
        }
        if (keepAlive.isNegative() || keepAlive.toMillis() > 0xffffffffL) {
            throw new IllegalArgumentException("keepAlive " + keepAlive + " is negative or too long");
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero() || ioTimeout.isNegative()) {
            throw new IllegalArgumentException("timeouts must be positive (ioTimeout may be zero: wait forever)");
        }
        if (busyPoll.isNegative() || busyPoll.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalArgumentException("busyPoll " + busyPoll + " is outside 0..1 s: tens of microseconds"
                    + " cover a round trip; zero sleeps at once");
        }
    }

    /**
     * @return 4 I/O queues of depth 128, keep-alive 10 s, no digests, connect timeout 10 s, I/O timeout 30 s, the
     *     kernel's route, one polled queue reserved, I/O queues on the polled data path over NVMe/TCP, no busy polling
     */
    public static ConnectOptions defaults() {
        return new ConnectOptions(
                null,
                4,
                128,
                Duration.ofSeconds(10),
                false,
                false,
                Duration.ofSeconds(10),
                Duration.ofSeconds(30),
                null,
                1,
                DEFAULT_POLLED_IO,
                Duration.ZERO);
    }

    public ConnectOptions withIdentity(HostIdentity v) {
        return copy(c -> c.identity = v);
    }

    public ConnectOptions withIoQueues(int v) {
        return copy(c -> c.ioQueues = v);
    }

    public ConnectOptions withQueueDepth(int v) {
        return copy(c -> c.queueDepth = v);
    }

    public ConnectOptions withKeepAlive(Duration v) {
        return copy(c -> c.keepAlive = v);
    }

    public ConnectOptions withDigests(boolean header, boolean data) {
        return copy(c -> {
            c.headerDigest = header;
            c.dataDigest = data;
        });
    }

    public ConnectOptions withConnectTimeout(Duration v) {
        return copy(c -> c.connectTimeout = v);
    }

    public ConnectOptions withIoTimeout(Duration v) {
        return copy(c -> c.ioTimeout = v);
    }

    /** @return these options leaving from {@code v}, a local address of the NIC to use (null: the kernel's route) */
    public ConnectOptions withSourceAddress(InetAddress v) {
        return copy(c -> c.sourceAddress = v);
    }

    /** @return these options reserving {@code v} polled queues (0: {@link Controller#openPolledQueue} refuses) */
    public ConnectOptions withPolledQueues(int v) {
        return copy(c -> c.polledQueues = v);
    }

    /** @return these options with the polled data path for NVMe/TCP I/O queues on ({@code true}) or off */
    public ConnectOptions withPolledIo(boolean v) {
        return copy(c -> c.polledIo = v);
    }

    /**
     * @return these options with queue threads polling for up to {@code v} before they sleep (polled data path over
     *     NVMe/TCP; {@link Duration#ZERO}: sleep at once)
     */
    public ConnectOptions withBusyPoll(Duration v) {
        return copy(c -> c.busyPoll = v);
    }

    /** The components as fields, for the {@code with...} methods to change one and make the copy. */
    private static final class Copy {
        HostIdentity identity;
        int ioQueues;
        int queueDepth;
        Duration keepAlive;
        boolean headerDigest;
        boolean dataDigest;
        Duration connectTimeout;
        Duration ioTimeout;
        InetAddress sourceAddress;
        int polledQueues;
        boolean polledIo;
        Duration busyPoll;

        Copy(ConnectOptions o) {
            identity = o.identity;
            ioQueues = o.ioQueues;
            queueDepth = o.queueDepth;
            keepAlive = o.keepAlive;
            headerDigest = o.headerDigest;
            dataDigest = o.dataDigest;
            connectTimeout = o.connectTimeout;
            ioTimeout = o.ioTimeout;
            sourceAddress = o.sourceAddress;
            polledQueues = o.polledQueues;
            polledIo = o.polledIo;
            busyPoll = o.busyPoll;
        }

        ConnectOptions build() {
            return new ConnectOptions(
                    identity,
                    ioQueues,
                    queueDepth,
                    keepAlive,
                    headerDigest,
                    dataDigest,
                    connectTimeout,
                    ioTimeout,
                    sourceAddress,
                    polledQueues,
                    polledIo,
                    busyPoll);
        }
    }

    /** @return a copy of these options with {@code change} made (and checked by the constructor) */
    private ConnectOptions copy(Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return c.build();
    }

    /** @return the identity to use: the given one, else the persistent one */
    public HostIdentity resolvedIdentity() {
        return identity != null ? identity : HostIdentity.persistent();
    }
}

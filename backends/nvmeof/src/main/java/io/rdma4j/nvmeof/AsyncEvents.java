package io.rdma4j.nvmeof;

import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Le;
import io.rdma4j.nvmeof.internal.Sqe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A controller's asynchronous events: it keeps Asynchronous Event Requests outstanding on the admin queue, clears each
 * event by reading the log page it names, drops changed namespaces from the controller's namespace cache, and hands the
 * event to the listeners (on a thread of their own) and to the backlog that {@link Controller#pollAsyncEvent} takes
 * from. It owns the listeners and the backlog, which outlive a reconnect; the requests belong to the session's admin
 * queue and end with it.
 */
final class AsyncEvents {
    /**
     * Events kept for {@link Controller#pollAsyncEvent} before the oldest is dropped (its Javadoc names the number).
     */
    static final int BACKLOG = 64;
    /** OAES notices this host asks for: Namespace Attribute (8), Firmware Activation (9), ANA Change (11). */
    private static final int AEN_NOTICES = 1 << 8 | 1 << 9 | 1 << 11;
    /** Listeners run here, never on a queue's reader thread, so they may call the controller (which waits on it). */
    private static final ExecutorService EVENTS = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "nvmeof-async-events");
        t.setDaemon(true);
        return t;
    });

    private final Target target;
    private final Duration connectTimeout;
    private final Map<Long, NamespaceInfo> namespaces;
    private final List<Consumer<AsyncEvent>> eventListeners = new CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>(BACKLOG);

    /**
     * @param connectTimeout how long to wait for Set Features Asynchronous Event Configuration
     * @param namespaces the controller's namespace cache (concurrent): changed namespaces are dropped from it
     */
    AsyncEvents(Target target, Duration connectTimeout, Map<Long, NamespaceInfo> namespaces) {
        this.target = target;
        this.connectTimeout = connectTimeout;
        this.namespaces = namespaces;
    }

    /**
     * Enables the notices the controller offers (OAES) and sends min(AERL + 1,
     * {@value Controller#MAX_ASYNC_EVENT_REQUESTS}) Asynchronous Event Requests.
     *
     * @return how many were sent
     */
    int arm(FabricQueue admin, List<FabricQueue> io, ControllerInfo info) {
        int notices = info.oaes() & AEN_NOTICES;
        if (notices != 0) {
            // A controller that refuses the configuration keeps its default one, whose events still arrive: not fatal.
            Calls.await(
                    admin.submit(
                            Sqe.setFeatures(Sqe.FID_ASYNC_EVENT_CONFIG, notices),
                            FabricQueue.Data.NONE,
                            "Set Features Asynchronous Event Configuration"),
                    connectTimeout,
                    target + ": Set Features Asynchronous Event Configuration");
        }
        int n = Math.min(info.aerl() + 1, Controller.MAX_ASYNC_EVENT_REQUESTS);
        for (int i = 0; i < n; i++) {
            asyncEventRequest(admin, io);
        }
        return n;
    }

    /** Sends one Asynchronous Event Request; its completion reads the named log page, reports the event and re-arms. */
    private void asyncEventRequest(FabricQueue admin, List<FabricQueue> io) {
        admin.submitUntimed(Sqe.asyncEventRequest(), "Asynchronous Event Request")
                .whenComplete((cqe, ex) -> {
                    if (ex != null || admin.failure() != null || !cqe.ok()) {
                        // The connection closed or failed (a reconnect arms new requests), or the controller ended this
                        // request
                        // with an error status (Asynchronous Event Request Limit Exceeded, aborted at shutdown): not
                        // re-armed.
                        return;
                    }
                    int dw0 = cqe.dw0();
                    int type = dw0 & 0x7;
                    int info = dw0 >>> 8 & 0xff;
                    int logPage = dw0 >>> 16 & 0xff;
                    if (!AsyncEvent.definedType(type) || logPage == 0) {
                        NvmeProtocolException why = new NvmeProtocolException(target
                                + ": the controller completed an Asynchronous Event Request with "
                                + (AsyncEvent.definedType(type)
                                        ? "log page identifier 0 (reserved)"
                                        : "reserved event type " + type)
                                + String.format(" (DW0 0x%08x); the connection was closed: call reconnect()", dw0));
                        io.forEach(q -> q.fail(why));
                        admin.fail(why);
                        return;
                    }
                    readEventLog(admin, io, type, info, logPage);
                });
    }

    /** Reads (and so clears) the log page an event names, then reports the event and sends a new request. */
    private void readEventLog(FabricQueue admin, List<FabricQueue> io, int type, int info, int logPage) {
        byte[] log = new byte[logPage == Sqe.LID_CHANGED_NAMESPACES ? 4096 : logPage == Sqe.LID_ERROR ? 64 : 512];
        String what = String.format("Get Log Page(0x%02x, clearing an asynchronous event)", logPage);
        admin.submit(Sqe.getLogPage(logPage, Sqe.NSID_ALL, 0, log.length), Calls.heap(log, false), what)
                .whenComplete((cqe, ex) -> {
                    if (ex != null || admin.failure() != null) {
                        return;
                    }
                    List<Long> changed = new ArrayList<>();
                    boolean more = false;
                    if (cqe.ok() && logPage == Sqe.LID_CHANGED_NAMESPACES) {
                        more = Le.u32(log, 0) == Sqe.NSID_ALL;
                        for (int i = 0; i < 1024 && !more; i++) {
                            long nsid = Le.u32(log, i * 4);
                            if (nsid == 0) {
                                break;
                            }
                            changed.add(nsid);
                        }
                    }
                    AsyncEvent e = new AsyncEvent(type, info, logPage, changed, more);
                    if (e.namespaceAttributeChanged()) {
                        if (more) {
                            namespaces.clear();
                        } else {
                            changed.forEach(namespaces::remove);
                        }
                    }
                    deliver(e);
                    asyncEventRequest(admin, io);
                });
    }

    private void deliver(AsyncEvent e) {
        while (!events.offer(e)) {
            events.poll(); // the backlog is full: the oldest event goes
        }
        EVENTS.execute(() -> {
            for (Consumer<AsyncEvent> l : eventListeners) {
                try {
                    l.accept(e);
                } catch (RuntimeException x) {
                    Thread t = Thread.currentThread();
                    t.getUncaughtExceptionHandler()
                            .uncaughtException(t, x); // one failing listener does not silence the others
                }
            }
        });
    }

    /**
     * Calls {@code listener} with every asynchronous event from now on, on a dedicated thread (it may call the
     * controller). Events arrive until the controller closes, across reconnects.
     *
     * @return closing it removes the listener
     */
    AutoCloseable listen(Consumer<AsyncEvent> listener) {
        java.util.Objects.requireNonNull(listener, "listener");
        eventListeners.add(listener);
        return () -> eventListeners.remove(listener);
    }

    /**
     * Takes the oldest event not yet taken, waiting up to {@code timeout} for one.
     *
     * @return the event, or null when none arrived in time
     */
    AsyncEvent poll(Duration timeout) throws InterruptedException {
        return events.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }
}

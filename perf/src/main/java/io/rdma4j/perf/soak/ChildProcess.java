package io.rdma4j.perf.soak;

import io.rdma4j.perf.ChildJava;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One {@link SoakPeer} process as the soak sees it: started (and restarted) with this JVM's java and class path, killed
 * with SIGKILL, asked for {@code AWAIT} verdicts and {@code STATS} over its stdin and stdout. Its stderr goes to a log
 * file that restarts append to.
 */
final class ChildProcess implements AutoCloseable {
    private final String label;
    private final List<String> args;
    private final Path log;
    private final String heap;
    private volatile Process process;
    private volatile PrintStream in;
    private volatile Map<Long, CompletableFuture<String>> awaits = new ConcurrentHashMap<>();
    private volatile Queue<CompletableFuture<Resources>> stats = new ConcurrentLinkedQueue<>();
    private final Object writing = new Object();
    private int starts;

    ChildProcess(String label, Path logDir, String heap, String... args) {
        this.label = label;
        this.args = List.of(args);
        this.log = logDir.resolve(label + ".log");
        this.heap = heap;
    }

    String label() {
        return label;
    }

    List<String> args() {
        return args;
    }

    Path log() {
        return log;
    }

    /** Starts the process and waits for its {@code READY}. */
    synchronized void start() throws IOException, InterruptedException {
        List<String> cmd = ChildJava.command(
                List.of("-XX:NativeMemoryTracking=summary", "-XX:+UseSerialGC", "-Xmx" + heap), SoakPeer.class, args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().put("IPATH_NO_BACKTRACE", "1");
        Process p = pb.start();
        starts++;
        Map<Long, CompletableFuture<String>> myAwaits = new ConcurrentHashMap<>();
        Queue<CompletableFuture<Resources>> myStats = new ConcurrentLinkedQueue<>();
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("soak-" + label + "-out").start(() -> read(p, ready, myAwaits, myStats));
        try {
            ready.get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | TimeoutException e) {
            p.destroyForcibly();
            throw new IOException(
                    label + " (start " + starts + ") did not get ready: "
                            + Ledger.unwrap(e).getMessage() + "; its stderr is in " + log,
                    e);
        }
        awaits = myAwaits;
        stats = myStats;
        in = new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8);
        process = p;
    }

    private void read(
            Process p,
            CompletableFuture<String> ready,
            Map<Long, CompletableFuture<String>> myAwaits,
            Queue<CompletableFuture<Resources>> myStats) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String l; (l = r.readLine()) != null; ) {
                if (l.startsWith("READY")) {
                    ready.complete(l);
                } else if (l.startsWith("TAG ")) {
                    int sp = l.indexOf(' ', 4);
                    CompletableFuture<String> f = myAwaits.remove(Long.parseLong(l.substring(4, sp)));
                    if (f != null) {
                        f.complete(l.substring(sp + 1));
                    }
                } else if (l.startsWith("STATS ")) {
                    CompletableFuture<Resources> f = myStats.poll();
                    if (f != null) {
                        f.complete(Resources.parse(l.substring(6)));
                    }
                }
            }
        } catch (IOException e) {
            // killed: said below
        }
        Ledger.SoakFailure gone = new Ledger.SoakFailure(
                "target process died", label + " exited (killed, or see " + log + ") before it answered");
        ready.completeExceptionally(gone);
        myAwaits.values().forEach(f -> f.completeExceptionally(gone));
        myStats.forEach(f -> f.completeExceptionally(gone));
    }

    /** Kills the process with SIGKILL and waits until it is gone. */
    synchronized void kill() throws InterruptedException {
        Process p = process;
        if (p != null) {
            p.destroyForcibly(); // SIGKILL on Linux
            p.waitFor();
        }
    }

    /** {@return the peer's verdict on the tagged write {@code tag} that its {@code provider} engine received} */
    CompletableFuture<String> await(String provider, long tag) {
        CompletableFuture<String> f = new CompletableFuture<>();
        Map<Long, CompletableFuture<String>> a = awaits;
        a.put(tag, f);
        PrintStream s = in;
        synchronized (writing) {
            s.println("AWAIT " + provider + " " + tag);
        }
        if (!process.isAlive()) {
            a.remove(tag);
            f.completeExceptionally(new Ledger.SoakFailure("target process died", label + " is not running"));
        }
        return f;
    }

    /** {@return the process's resources now} */
    Resources stats() throws Exception {
        CompletableFuture<Resources> f = new CompletableFuture<>();
        stats.add(f);
        synchronized (writing) {
            in.println("STATS");
        }
        return f.get(30, TimeUnit.SECONDS);
    }

    @Override
    public synchronized void close() throws InterruptedException {
        Process p = process;
        if (p != null) {
            in.close(); // it exits when its stdin closes
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor();
            }
        }
    }
}

package io.rdma4j.libfabric;

import io.rdma4j.ffi.Libc;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * The target process of {@link TwoProcessTest}: prints its endpoint name and region on stdout, reads the initiator's
 * name on stdin, polls until the initiator's final writedata arrives, verifies every byte and says so. Args: provider,
 * region size, expected remote CQ data.
 */
public final class TargetMain {
    private TargetMain() {}

    public static void main(String[] args) throws Exception {
        long sigsegvBefore = Libc.signalHandler(11);
        String provider = args[0];
        long size = Long.parseLong(args[1]);
        long expectedData = Long.parseLong(args[2]);
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Peer me = new Peer(infos.first(), size)) {
            System.out.println("SIGSEGV " + (Libc.signalHandler(11) == sigsegvBefore ? "kept" : "replaced"));
            System.out.println("NAME " + hex.formatHex(me.ep.name()));
            System.out.println("REGION " + hex.formatHex(me.mr.remote().toBytes()));
            System.out.flush();
            String line = in.readLine();
            if (line == null || !line.startsWith("PEER ")) {
                throw new IllegalStateException("expected PEER <hex>, got " + line);
            }
            me.av.insert(hex.parseHex(line.substring(5)));
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (me.remoteData.isEmpty()) {
                me.poll();
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no writedata within 60 s");
                }
            }
            if (me.remoteData.get(0) != expectedData) {
                System.out.println("WRONG-DATA " + me.remoteData.get(0));
                return;
            }
            for (long i = 0; i < size; i++) {
                if (me.buffer.get(ValueLayout.JAVA_BYTE, i) != pattern(i)) {
                    System.out.println("MISMATCH " + i);
                    return;
                }
            }
            if (Libc.signalHandler(11) != sigsegvBefore) {
                System.out.println("SIGSEGV replaced during the transfer");
                return;
            }
            System.out.println("VERIFIED " + size);
        }
    }

    static byte pattern(long i) {
        return (byte) (i ^ (i >>> 8) ^ (i >>> 16) ^ 0x5a);
    }
}

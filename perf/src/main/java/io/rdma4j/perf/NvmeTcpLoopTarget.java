package io.rdma4j.perf;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.CRC32C;

/**
 * A minimal NVMe/TCP peer on loopback for {@link NvmeTcpQueueBench} and {@link NvmeControllerBench}: it answers the
 * ICReq, enough of bring-up for {@code Controller.connect} (Connect, properties, Identify, Number of Queues; it holds
 * Asynchronous Event Requests), then every Read with one C2HData carrying the SUCCESS flag, every in-capsule Write with
 * a CapsuleResp, and every other Write with one R2T for the whole transfer and a CapsuleResp once all its H2CData
 * arrived (any number of writes outstanding). It keeps no data and, once connected, allocates nothing per command
 * (reused direct buffers, one CRC32C per connection), so a {@code -prof gc} run charges the initiator alone. It trusts
 * its peer: it is a benchmark fixture, not a target (the real one is Linux nvmet in the test VM).
 */
final class NvmeTcpLoopTarget implements AutoCloseable {
    static final String NQN = "nqn.2026-01.io.rdma4j:loop";
    private static final int CAPSULE_CMD = 4, CAPSULE_RESP = 5, H2C_DATA = 6, C2H_DATA = 7, R2T = 9;
    private static final int OPC_READ = 2, SGL_IN_CAPSULE = 0x01;
    /** One namespace of 512-byte blocks, 1 GiB: nothing is stored, reads return a fixed pattern. */
    private static final long BLOCKS = 1L << 21;

    private final ServerSocketChannel server;
    private final int maxData;
    private final ByteBuffer payload;
    private final List<SocketChannel> conns = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    NvmeTcpLoopTarget(int maxData) throws IOException {
        this.maxData = maxData;
        server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        payload = ByteBuffer.allocateDirect(Math.max(maxData, 4096));
        for (int i = 0; i < payload.capacity(); i++) {
            payload.put(i, (byte) (i * 31 + 7));
        }
        acceptor = Thread.ofPlatform().daemon().name("nvme-loop-accept").start(this::acceptLoop);
    }

    InetSocketAddress address() throws IOException {
        return (InetSocketAddress) server.getLocalAddress();
    }

    private void acceptLoop() {
        try {
            while (true) {
                SocketChannel c = server.accept();
                conns.add(c);
                Thread.ofPlatform().daemon().name("nvme-loop-target").start(() -> new Conn(c).serve());
            }
        } catch (IOException e) {
            // the server socket closed: the trial is over
        }
    }

    /** One connection's state and buffers. */
    private final class Conn {
        private final SocketChannel c;
        private final ByteBuffer in = ByteBuffer.allocateDirect(256).order(ByteOrder.LITTLE_ENDIAN);
        private final ByteBuffer out = ByteBuffer.allocateDirect(256).order(ByteOrder.LITTLE_ENDIAN);
        private final ByteBuffer sink = ByteBuffer.allocateDirect(maxData + 8);
        private final ByteBuffer identify = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
        private final ByteBuffer data = payload.duplicate(); // this connection's position over the shared pattern
        private final ByteBuffer[] gather = new ByteBuffer[3];
        private final ByteBuffer digest = ByteBuffer.allocateDirect(4).order(ByteOrder.LITTLE_ENDIAN);
        private final CRC32C crc = new CRC32C();
        private boolean hdgst;
        private boolean ddgst;
        private int qid = -1;
        private long cc;

        Conn(SocketChannel c) {
            this.c = c;
        }

        void serve() {
            try (c) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                readFully(c, in.clear().limit(128));
                int dgst = in.get(11) & 3;
                hdgst = (dgst & 1) != 0;
                ddgst = (dgst & 2) != 0;
                out.clear();
                for (int i = 0; i < 128; i++) {
                    out.put(i, (byte) 0);
                }
                out.put(0, (byte) 1)
                        .put(2, (byte) 128)
                        .putInt(4, 128)
                        .put(11, (byte) dgst)
                        .putInt(12, 131072);
                writeFully(c, out.limit(128));
                long[] expectH2C = new long[1 << 16]; // bytes still due per command identifier
                while (true) {
                    if (!readFully(c, in.clear().limit(8))) {
                        return;
                    }
                    int type = in.get(0) & 0xff;
                    int flags = in.get(1) & 0xff;
                    int hlen = in.get(2) & 0xff;
                    int plen = in.getInt(4);
                    int hd = (flags & 1) != 0 ? 4 : 0;
                    readFully(c, in.limit(hlen + hd));
                    int rest = plen - hlen - hd;
                    if (rest > 0) {
                        readFully(c, sink.clear().limit(rest));
                    }
                    if (type == CAPSULE_CMD) {
                        int opcode = in.get(8) & 0xff;
                        int cid = in.getShort(10) & 0xffff;
                        int length = in.getInt(8 + 32);
                        int sglId = in.get(8 + 39) & 0xff;
                        if (opcode == 0x7f || qid == 0) {
                            admin(opcode, cid);
                        } else if (opcode == OPC_READ) {
                            c2h(cid, data.clear().limit(length));
                        } else if (sglId == SGL_IN_CAPSULE || length == 0) {
                            resp(cid, 0, 0);
                        } else {
                            expectH2C[cid] = length;
                            r2t(cid, length);
                        }
                    } else if (type == H2C_DATA) {
                        int cid = in.getShort(8) & 0xffff;
                        expectH2C[cid] -= in.getInt(16);
                        if (expectH2C[cid] == 0) {
                            resp(cid, 0, 0);
                        }
                    } else {
                        return; // a TermReq or anything else: the bench is over
                    }
                }
            } catch (IOException e) {
                // the initiator closed the connection: the trial is over
            }
        }

        /** Bring-up and admin commands: allocation here is setup, outside what a bench measures. */
        private void admin(int opcode, int cid) throws IOException {
            switch (opcode) {
                case 0x7f -> {
                    int fctype = in.get(8 + 4) & 0xff;
                    if (fctype == 0x01) { // Connect
                        qid = in.getShort(8 + 42) & 0xffff;
                        resp(cid, 1, 0);
                    } else if (fctype == 0x04) { // Property Get
                        int ofst = in.getInt(8 + 44);
                        long v = switch (ofst) {
                            case 0x00 -> 127 | 1L << 16 | 0x1eL << 24 | 1L << 37; // CAP: MQES, CQR, TO, CSS NVM
                            case 0x08 -> 0x10400;
                            case 0x14 -> cc;
                            case 0x1c -> (cc & 1) | ((cc >>> 14 & 3) != 0 ? 2 << 2 : 0); // CSTS: RDY, SHST
                            default -> 0;
                        };
                        resp(cid, (int) v, (int) (v >>> 32));
                    } else { // Property Set
                        cc = in.getLong(8 + 48);
                        resp(cid, 0, 0);
                    }
                }
                case 0x06 -> { // Identify
                    int cns = in.get(8 + 40) & 0xff;
                    for (int i = 0; i < 4096; i++) {
                        identify.put(i, (byte) 0);
                    }
                    if (cns == 0x01) {
                        putAscii(4, 20, "LOOP0001");
                        putAscii(24, 40, "rdma4j loop target");
                        identify.put(77, (byte) (Integer.numberOfTrailingZeros(maxData) - 12)); // MDTS in 4 KiB pages
                        identify.putShort(78, (short) 1);
                        identify.putShort(514, (short) 128);
                        identify.putInt(516, 1);
                        putAscii(768, 256, NQN);
                        identify.putInt(1792, (8192 + 64) / 16);
                        identify.putInt(1796, 1);
                    } else if (cns == 0x02) {
                        identify.putInt(0, 1);
                    } else if (cns == 0x00) {
                        identify.putLong(0, BLOCKS).putLong(8, BLOCKS).putLong(16, BLOCKS);
                        identify.put(128 + 2, (byte) 9);
                    }
                    c2h(cid, identify.clear());
                }
                case 0x09 -> resp(cid, 7 << 16 | 7, 0); // Number of Queues: 8 and 8
                case 0x0c -> {
                    // Asynchronous Event Request: held, this peer has no events
                }
                default -> resp(cid, 0, 0);
            }
        }

        private void putAscii(int off, int len, String s) {
            byte[] b = s.getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < len; i++) {
                identify.put(off + i, i < b.length ? b[i] : (byte) ' ');
            }
        }

        private void header(int type, int flags, int hlen, int pdo, int plen) {
            out.clear();
            for (int i = 0; i < hlen; i++) {
                out.put(i, (byte) 0);
            }
            out.put(0, (byte) type)
                    .put(1, (byte) (flags | (hdgst ? 1 : 0)))
                    .put(2, (byte) hlen)
                    .put(3, (byte) pdo)
                    .putInt(4, plen);
        }

        private void finishHeader(int hlen, ByteBuffer data) throws IOException {
            int n = hlen;
            if (hdgst) {
                crc.reset();
                crc.update(out.limit(hlen).position(0));
                out.limit(hlen + 4).putInt(hlen, (int) crc.getValue());
                n += 4;
            }
            out.position(0).limit(n);
            if (data == null) {
                writeFully(c, out);
                return;
            }
            gather[0] = out;
            gather[1] = data;
            int parts = 2;
            if (ddgst) {
                int p = data.position();
                crc.reset();
                crc.update(data);
                data.position(p);
                digest.clear().putInt(0, (int) crc.getValue());
                gather[2] = digest;
                parts = 3;
            }
            long left = n + data.remaining() + (ddgst ? 4 : 0);
            while (left > 0) {
                left -= c.write(gather, 0, parts);
            }
        }

        private void c2h(int cid, ByteBuffer data) throws IOException {
            int length = data.remaining();
            int pdo = 24 + (hdgst ? 4 : 0);
            header(C2H_DATA, 0x04 | 0x08 | (ddgst ? 2 : 0), 24, pdo, pdo + length + (ddgst ? 4 : 0));
            out.putShort(8, (short) cid).putInt(12, 0).putInt(16, length);
            finishHeader(24, data);
        }

        private void resp(int cid, int dw0, int dw1) throws IOException {
            header(CAPSULE_RESP, 0, 24, 0, 24 + (hdgst ? 4 : 0));
            out.putInt(8, dw0)
                    .putInt(12, dw1)
                    .putShort(8 + 10, (short) Math.max(qid, 0))
                    .putShort(8 + 12, (short) cid);
            finishHeader(24, null);
        }

        private void r2t(int cid, int length) throws IOException {
            header(R2T, 0, 24, 0, 24 + (hdgst ? 4 : 0));
            out.putShort(8, (short) cid).putShort(10, (short) 1).putInt(12, 0).putInt(16, length);
            finishHeader(24, null);
        }
    }

    private static boolean readFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                return false;
            }
        }
        return true;
    }

    private static void writeFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (SocketChannel c : conns) {
            c.close();
        }
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

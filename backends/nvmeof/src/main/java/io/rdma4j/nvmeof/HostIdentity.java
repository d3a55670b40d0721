package io.rdma4j.nvmeof;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.UUID;

/**
 * The host NQN and 16-byte host identifier this initiator presents in Fabrics Connect. A subsystem that restricts hosts
 * lists the NQN, and controllers tie reservations to the host ID, so both stay the same across runs: they are created
 * once, as {@code nqn.2014-08.org.nvmexpress:uuid:<uuid>} and that UUID, and kept in
 * {@code $XDG_CONFIG_HOME/rdma4j/hostnqn} and {@code hostid} (default {@code ~/.config/rdma4j}).
 *
 * @param nqn host NQN
 * @param id host identifier
 */
public record HostIdentity(String nqn, UUID id) {
    public HostIdentity {
        validateNqn(nqn, "host NQN");
    }

    /** Checks the NQN rules a target enforces: ASCII/UTF-8, at most 223 bytes, starting with {@code nqn.}. */
    public static void validateNqn(String nqn, String what) {
        if (nqn == null || nqn.isEmpty()) {
            throw new IllegalArgumentException(what + " is empty");
        }
        if (nqn.getBytes(StandardCharsets.UTF_8).length > 223) {
            throw new IllegalArgumentException(what + " '" + nqn + "' is longer than the 223 bytes an NQN may have");
        }
        if (!nqn.startsWith("nqn.")) {
            throw new IllegalArgumentException(
                    what + " '" + nqn + "' does not start with 'nqn.' (e.g. nqn.2014-08.org.nvmexpress:uuid:...)");
        }
    }

    /** @return the host ID as the 16 bytes Connect carries (the UUID's bytes in order) */
    public byte[] idBytes() {
        byte[] b = new byte[16];
        long hi = id.getMostSignificantBits();
        long lo = id.getLeastSignificantBits();
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (hi >>> (56 - 8 * i));
            b[8 + i] = (byte) (lo >>> (56 - 8 * i));
        }
        return b;
    }

    /** @return the identity kept under the user's configuration directory, created there on first use */
    public static HostIdentity persistent() {
        String xdg = System.getenv("XDG_CONFIG_HOME");
        Path dir = (xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".config"))
                .resolve("rdma4j");
        return persistent(dir);
    }

    /** @return the identity kept in {@code dir/hostnqn} and {@code dir/hostid}, created there on first use */
    public static HostIdentity persistent(Path dir) {
        Path nqnFile = dir.resolve("hostnqn");
        Path idFile = dir.resolve("hostid");
        try {
            if (!Files.exists(nqnFile)) {
                UUID u = UUID.randomUUID();
                Files.createDirectories(dir);
                // Two processes starting at once must agree: the first file to land wins, the other reads it.
                writeOnce(idFile, u.toString());
                String id = Files.readString(idFile, StandardCharsets.US_ASCII).strip();
                writeOnce(nqnFile, "nqn.2014-08.org.nvmexpress:uuid:" + id);
            }
            String nqn = Files.readString(nqnFile, StandardCharsets.US_ASCII).strip();
            UUID id;
            if (Files.exists(idFile)) {
                id = UUID.fromString(
                        Files.readString(idFile, StandardCharsets.US_ASCII).strip());
            } else {
                id = nqn.contains(":uuid:")
                        ? UUID.fromString(nqn.substring(nqn.lastIndexOf(':') + 1))
                        : UUID.nameUUIDFromBytes(nqn.getBytes(StandardCharsets.UTF_8));
                writeOnce(idFile, id.toString());
            }
            return new HostIdentity(nqn, id);
        } catch (IOException | IllegalArgumentException e) {
            throw new NvmeException(
                    "cannot read or create the host identity in " + dir + " (" + e.getMessage()
                            + "): fix or delete hostnqn/hostid there, or pass ConnectOptions.hostIdentity(...)",
                    e);
        }
    }

    private static void writeOnce(Path file, String content) throws IOException {
        Path tmp = Files.createTempFile(file.getParent(), file.getFileName().toString(), ".tmp");
        try {
            Files.writeString(tmp, content + "\n", StandardCharsets.US_ASCII);
            try {
                Files.createLink(file, tmp);
            } catch (FileAlreadyExistsException e) {
                return;
            } catch (UnsupportedOperationException | IOException e) {
                if (!Files.exists(file)) {
                    try {
                        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
                    } catch (AtomicMoveNotSupportedException e2) {
                        Files.move(tmp, file);
                    }
                }
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}

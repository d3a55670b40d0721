package io.rdma4j.rendezvous;

/** {@link DirectoryTest} against a directory over loopback TCP that requires a token. */
class TcpDirectoryTest extends DirectoryTest {
    private static final String TOKEN = "directory-test-token";

    @Override
    DirectoryServer.Builder listen(DirectoryServer.Builder b) {
        return b.bindAddress("127.0.0.1").security(Security.token(TOKEN));
    }

    @Override
    Security security() {
        return Security.token(TOKEN);
    }
}

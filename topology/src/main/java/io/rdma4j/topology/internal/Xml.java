package io.rdma4j.topology.internal;

import io.rdma4j.topology.TopologyException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;

/** DOM helpers; topology files are untrusted input, so no DTD or external entity is ever fetched. */
final class Xml {
    private Xml() {}

    static Document parse(Path file) {
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
            f.setFeature("http://xml.org/sax/features/external-general-entities", false);
            f.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
            f.setXIncludeAware(false);
            f.setExpandEntityReferences(false);
            f.setNamespaceAware(false);
            DocumentBuilder b = f.newDocumentBuilder();
            b.setErrorHandler(null);
            try (InputStream in = Files.newInputStream(file)) {
                return b.parse(in, file.toUri().toString());
            }
        } catch (IOException e) {
            throw new TopologyException("cannot read topology file " + file + ": " + e.getMessage(), e);
        } catch (SAXException e) {
            throw new TopologyException(
                    "topology file " + file + " is not well-formed XML: " + e.getMessage()
                            + " (expected an NCCL topology (<system>) or hwloc (<topology>) file)",
                    e);
        } catch (ParserConfigurationException e) {
            throw new TopologyException("the JDK's XML parser cannot be configured securely: " + e.getMessage(), e);
        }
    }

    static List<Element> children(Element parent, String tag) {
        List<Element> out = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && (tag == null || e.getTagName().equals(tag))) {
                out.add(e);
            }
        }
        return out;
    }

    /** @return the attribute, or null when absent or blank */
    static String attr(Element e, String name) {
        String v = e.getAttribute(name);
        return v == null || v.isBlank() ? null : v.trim();
    }
}

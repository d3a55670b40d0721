// Run by maven-invoker-plugin after the consumer's build passed: checks what that build's exit status does not say.
import java.util.jar.JarFile

def log = new File(basedir, 'build.log').text
assert log.contains('verified 1048576 bytes written by sender') : 'the consumer did not report its verified write'

// each rdma4j jar the consumer resolved carries its stable module name
def names = ['engine': 'io.rdma4j.engine', 'libfabric': 'io.rdma4j.libfabric', 'backend-common': 'io.rdma4j.common',
             'topology': 'io.rdma4j.topology', 'rendezvous': 'io.rdma4j.rendezvous', 'proto': 'io.rdma4j.proto']
names.each { artifact, name ->
    def jar = new File(localRepositoryPath,
            "io/rdma4j/rdma4j-$artifact/$projectVersion/rdma4j-$artifact-${projectVersion}.jar")
    def actual = new JarFile(jar).withCloseable { it.manifest.mainAttributes.getValue('Automatic-Module-Name') }
    assert actual == name : "$jar has Automatic-Module-Name $actual, expected $name"
}

// the README's "Use it from Maven" shows this class verbatim, less its Javadoc
def section = new File(readme).text.with { it.substring(it.indexOf('## Use it from Maven')) }
def from = section.indexOf('```java\n') + '```java\n'.length()
def shown = section.substring(from, section.indexOf('\n```', from))
def source = new File(basedir, 'src/main/java/example/WriteAndVerify.java').text
def doc = source.indexOf('/**')
def expected = source.substring(0, doc) + source.substring(source.indexOf('*/', doc) + 3)
assert shown.trim() == expected.trim() : "$readme, 'Use it from Maven': the class shown is not the one that ran"

// the BOM lists every jar the build publishes (examples and perf are never dependencies), test-jars included
def root = new File(readme).parentFile
def bom = new groovy.xml.XmlSlurper().parse(new File(root, 'bom/pom.xml'))
def listed = bom.dependencyManagement.dependencies.dependency.collect { "${it.artifactId}:${it.type.text() ?: 'jar'}" }
new groovy.xml.XmlSlurper().parse(new File(root, 'pom.xml')).modules.module*.text().each { module ->
    def pom = new File(root, "$module/pom.xml")
    def model = new groovy.xml.XmlSlurper().parse(pom)
    if (model.packaging.text() == 'pom' || module in ['examples', 'perf']) {
        return
    }
    def wanted = ["${model.artifactId}:jar"]
    if (pom.text.contains('<goal>test-jar</goal>')) {
        wanted << "${model.artifactId}:test-jar"
    }
    wanted.each { assert it in listed : "bom/pom.xml does not list $it, which $module publishes" }
}
true

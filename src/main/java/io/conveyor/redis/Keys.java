package io.conveyor.redis;

/** Every Redis key name, built from the configured prefix. docs/redis-keys.md describes each. */
public final class Keys {
  private final String prefix;

  public Keys(String prefix) {
    this.prefix = prefix;
  }

  public String prefix() {
    return prefix;
  }

  public String stateH(String txId) {
    return prefix + "stateH:" + txId;
  }

  public String pipelineH(String pipeline) {
    return prefix + "pipelineH:" + pipeline;
  }

  public String pipelinesS() {
    return prefix + "pipelinesS";
  }

  public String pipelineVersionsH(String pipeline) {
    return prefix + "pipelineVersionsH:" + pipeline;
  }

  public String qInL(String group) {
    return prefix + "qInL:" + group;
  }

  public String qOutL(String group) {
    return prefix + "qOutL:" + group;
  }

  public String qAdminL(String group) {
    return prefix + "qAdminL:" + group;
  }

  public String qRingL(String group) {
    return prefix + "qRingL:" + group;
  }

  public String processingZ() {
    return prefix + "processingZ";
  }

  public String inflightZ(String nodeId) {
    return prefix + "inflightZ:" + nodeId;
  }

  public String rateH(String owner) {
    return prefix + "rateH:" + owner;
  }

  public String sleepingZ() {
    return prefix + "sleepingZ";
  }

  /** A webhook event and its delivery state; the completion event of a transaction has the txId as its id. */
  public String webhookH(String webhookId) {
    return prefix + "webhookH:" + webhookId;
  }

  public String webhooksZ() {
    return prefix + "webhooksZ";
  }

  public String toArchiveZ() {
    return prefix + "toArchiveZ";
  }

  public String externalId(String owner, String externalId) {
    return prefix + "externalId:" + owner + ":" + externalId;
  }

  public String notifyChannel() {
    return prefix + "notify";
  }

  public String heartbeat(String nodeId) {
    return prefix + "node:" + nodeId + ":heartbeat";
  }

  public String nodesZ() {
    return prefix + "nodesZ";
  }

  public String exceptionZ() {
    return prefix + "exceptionZ";
  }

  public String eventsL() {
    return prefix + "eventsL";
  }

  /** The two lease keys of a leader-only role: role + "Lock1" and role + "Lock2" (reaper, toArchive, webhook). */
  public String lock1(String role) {
    return prefix + role + "Lock1";
  }

  public String lock2(String role) {
    return prefix + role + "Lock2";
  }
}

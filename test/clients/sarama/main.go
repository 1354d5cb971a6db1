// sarama 1.22.1 (Debian golang-github-shopify-sarama-dev) against a Ferry broker, speaking
// Kafka 2.2's versions: every operation once, one JSON line each (test/clients/support/
// suite-report.ts reads them; test/clients/sarama.test.ts asserts Kafka's semantics on them).
//
//	sarama-suite HOST:PORT
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/Shopify/sarama"
)

const (
	// Every operation gives up after this long, so one missing API cannot stall the suite.
	operationTimeout = 20 * time.Second
	// How long a consumer waits for the messages it expects before reporting what it got.
	consumeDeadline  = 15 * time.Second
	messagesPerTopic = 30
	group            = "sr-readers"
	groupTopic       = "sr-group"
	configuredTopic  = "sr-configured"
	adminTopic       = "sr-admin"
	recordsTopic     = "sr-none"
	retentionMs      = "3600000"
	alteredRetention = "7200000"
	deleteBefore     = 10
)

var bootstrap []string

type report map[string]interface{}

// operation runs f, bounded by operationTimeout, and prints its line.
func operation(name string, f func() (report, error)) {
	started := time.Now()
	type outcome struct {
		data report
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		data, err := f()
		done <- outcome{data, err}
	}()
	line := map[string]interface{}{"op": name}
	select {
	case result := <-done:
		if result.err != nil {
			line["ok"], line["error"] = false, fmt.Sprintf("%T: %v", result.err, result.err)
		} else {
			line["ok"], line["data"] = true, result.data
		}
	case <-time.After(operationTimeout):
		line["ok"], line["error"] = false, fmt.Sprintf("timed out after %s", operationTimeout)
	}
	line["ms"] = time.Since(started).Milliseconds()
	text, _ := json.Marshal(line)
	fmt.Println(string(text))
}

// adminOperation gives each operation a ClusterAdmin of its own: a broker that closes the
// connection on an API it lacks would otherwise fail every later call on the same admin.
func adminOperation(name string, f func(sarama.ClusterAdmin) (report, error)) {
	operation(name, func() (report, error) {
		admin, err := sarama.NewClusterAdmin(bootstrap, newConfig())
		if err != nil {
			return nil, err
		}
		defer admin.Close()
		return f(admin)
	})
}

func newConfig() *sarama.Config {
	config := sarama.NewConfig()
	config.Version = sarama.V2_2_0_0
	config.ClientID = "sarama-suite"
	config.Net.DialTimeout = 5 * time.Second
	config.Net.ReadTimeout = 10 * time.Second
	config.Net.WriteTimeout = 10 * time.Second
	config.Metadata.Retry.Max = 2
	return config
}

func valuesOf(name string, count int) []string {
	values := make([]string, count)
	for i := range values {
		values[i] = fmt.Sprintf("%s message %d %s", name, i, strings.Repeat("x", i*7))
	}
	return values
}

// produce sends values to partition 0 (acks=all) and returns their offsets.
func produce(topic string, values []string, configure func(*sarama.Config)) ([]int64, error) {
	config := newConfig()
	config.Producer.RequiredAcks = sarama.WaitForAll
	config.Producer.Return.Successes = true
	config.Producer.Partitioner = sarama.NewManualPartitioner
	configure(config)
	producer, err := sarama.NewSyncProducer(bootstrap, config)
	if err != nil {
		return nil, err
	}
	defer producer.Close()
	messages := make([]*sarama.ProducerMessage, len(values))
	for i, value := range values {
		messages[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(value)}
	}
	if err := producer.SendMessages(messages); err != nil {
		return nil, err
	}
	offsets := make([]int64, len(messages))
	for i, message := range messages {
		offsets[i] = message.Offset
	}
	return offsets, nil
}

// consumePartition reads [offset, value] pairs from start by partition (no group).
func consumePartition(topic string, start int64, count int) ([][2]interface{}, error) {
	consumer, err := sarama.NewConsumer(bootstrap, newConfig())
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	partition, err := consumer.ConsumePartition(topic, 0, start)
	if err != nil {
		return nil, err
	}
	defer partition.Close()
	got := [][2]interface{}{}
	deadline := time.After(consumeDeadline)
	for len(got) < count {
		select {
		case message := <-partition.Messages():
			got = append(got, [2]interface{}{message.Offset, string(message.Value)})
		case err := <-partition.Errors():
			return got, err
		case <-deadline:
			return got, nil
		}
	}
	return got, nil
}

// groupReader marks every message it is given; the session commits the marks.
type groupReader struct {
	values   chan string
	expected int
}

func (r *groupReader) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (r *groupReader) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (r *groupReader) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for message := range claim.Messages() {
		session.MarkMessage(message, "")
		r.values <- string(message.Value)
	}
	return nil
}

// readGroup joins the group, reads up to expected values, and leaves (committing its marks).
func readGroup(expected int) ([]string, error) {
	config := newConfig()
	config.Consumer.Offsets.Initial = sarama.OffsetOldest
	config.Consumer.Offsets.CommitInterval = 100 * time.Millisecond
	config.Consumer.Group.Session.Timeout = 6 * time.Second
	config.Consumer.Return.Errors = true
	consumerGroup, err := sarama.NewConsumerGroup(bootstrap, group, config)
	if err != nil {
		return nil, err
	}
	reader := &groupReader{values: make(chan string, expected+messagesPerTopic), expected: expected}
	ctx, cancel := context.WithCancel(context.Background())
	failed := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := consumerGroup.Consume(ctx, []string{groupTopic}, reader); err != nil {
				failed <- err
				return
			}
		}
	}()
	got := []string{}
	deadline := time.After(consumeDeadline)
	var groupErr error
loop:
	for len(got) < expected {
		select {
		case value := <-reader.values:
			got = append(got, value)
		case groupErr = <-failed:
			break loop
		case groupErr = <-consumerGroup.Errors():
			break loop
		case <-deadline:
			break loop
		}
	}
	time.Sleep(2 * config.Consumer.Offsets.CommitInterval) // the marks reach the coordinator
	cancel()
	if err := consumerGroup.Close(); err != nil && groupErr == nil {
		groupErr = err
	}
	return got, groupErr
}

func committedOffset(admin sarama.ClusterAdmin) (int64, error) {
	response, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{groupTopic: {0}})
	if err != nil {
		return 0, err
	}
	block := response.GetBlock(groupTopic, 0)
	if block == nil {
		return 0, errors.New("no offset block for the group's partition")
	}
	if block.Err != sarama.ErrNoError {
		return 0, block.Err
	}
	return block.Offset, nil
}

func describeTopicConfigs(admin sarama.ClusterAdmin, topic string) ([]map[string]interface{}, error) {
	entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic})
	if err != nil {
		return nil, err
	}
	described := make([]map[string]interface{}, len(entries))
	for i, e := range entries {
		described[i] = map[string]interface{}{"name": e.Name, "value": e.Value, "source": int(e.Source), "readOnly": e.ReadOnly, "isDefault": e.Default}
	}
	return described, nil
}

func partitionsOf(admin sarama.ClusterAdmin, topic string) (int, error) {
	metadata, err := admin.DescribeTopics([]string{topic})
	if err != nil {
		return 0, err
	}
	if metadata[0].Err != sarama.ErrNoError {
		return 0, metadata[0].Err
	}
	return len(metadata[0].Partitions), nil
}

// kafkaError is the error's Kafka name (sarama.KError) or its text.
func kafkaError(err error) interface{} {
	if err == nil {
		return nil
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return int(kerr)
	}
	if topicErr, ok := err.(*sarama.TopicError); ok {
		return int(topicErr.Err)
	}
	if topicPartitionErr, ok := err.(*sarama.TopicPartitionError); ok {
		return int(topicPartitionErr.Err)
	}
	return err.Error()
}

func main() {
	bootstrap = []string{os.Args[1]}
	codecs := map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP, "snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD}
	for _, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		codec := codecs[name]
		operation("produce.idempotent."+name, func() (report, error) {
			values := valuesOf(name, messagesPerTopic)
			offsets, err := produce("sr-"+name, values, func(c *sarama.Config) {
				c.Producer.Compression = codec
				c.Producer.Idempotent = true
				c.Net.MaxOpenRequests = 1
			})
			if err != nil {
				return nil, err
			}
			consumed, err := consumePartition("sr-"+name, sarama.OffsetOldest, len(values))
			return report{"offsets": offsets, "sent": values, "consumed": consumed}, err
		})
	}
	operation("consume.partition", func() (report, error) {
		consumed, err := consumePartition(recordsTopic, 10, messagesPerTopic-10)
		return report{"consumed": consumed}, err
	})

	adminOperation("group.consume", func(admin sarama.ClusterAdmin) (report, error) {
		first := make([]string, 10)
		for i := range first {
			first[i] = fmt.Sprintf("first-%d", i)
		}
		if _, err := produce(groupTopic, first, func(*sarama.Config) {}); err != nil {
			return nil, err
		}
		values, err := readGroup(10)
		if err != nil {
			return nil, err
		}
		committed, err := committedOffset(admin)
		return report{"values": values, "committed": committed}, err
	})
	adminOperation("group.resume", func(admin sarama.ClusterAdmin) (report, error) {
		second := make([]string, 5)
		for i := range second {
			second[i] = fmt.Sprintf("second-%d", i)
		}
		if _, err := produce(groupTopic, second, func(*sarama.Config) {}); err != nil {
			return nil, err
		}
		values, err := readGroup(5)
		if err != nil {
			return nil, err
		}
		committed, err := committedOffset(admin)
		return report{"values": values, "committed": committed}, err
	})

	adminOperation("admin.create_topics", func(admin sarama.ClusterAdmin) (report, error) {
		retention := retentionMs
		if err := admin.CreateTopic(adminTopic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1}, false); err != nil {
			return nil, err
		}
		if err := admin.CreateTopic(configuredTopic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1, ConfigEntries: map[string]*string{"retention.ms": &retention}}, false); err != nil {
			return nil, err
		}
		again := admin.CreateTopic(adminTopic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1}, false)
		partitions, err := partitionsOf(admin, adminTopic)
		return report{"again": kafkaError(again), "partitions": partitions}, err
	})
	adminOperation("admin.describe_configs", func(admin sarama.ClusterAdmin) (report, error) {
		entries, err := describeTopicConfigs(admin, configuredTopic)
		return report{"entries": entries}, err
	})
	adminOperation("admin.alter_configs", func(admin sarama.ClusterAdmin) (report, error) {
		retention := alteredRetention
		if err := admin.AlterConfig(sarama.TopicResource, configuredTopic, map[string]*string{"retention.ms": &retention}, false); err != nil {
			return nil, err
		}
		entries, err := describeTopicConfigs(admin, configuredTopic)
		return report{"after": entries}, err
	})
	adminOperation("admin.create_partitions", func(admin sarama.ClusterAdmin) (report, error) {
		if err := admin.CreatePartitions(adminTopic, 5, nil, false); err != nil {
			return nil, err
		}
		shrunk := admin.CreatePartitions(adminTopic, 2, nil, false)
		partitions, err := partitionsOf(admin, adminTopic)
		return report{"shrunk": kafkaError(shrunk), "partitions": partitions}, err
	})
	adminOperation("admin.describe_cluster", func(admin sarama.ClusterAdmin) (report, error) {
		brokers, controller, err := admin.DescribeCluster()
		addresses := map[string]string{}
		for _, broker := range brokers {
			addresses[fmt.Sprint(broker.ID())] = broker.Addr()
		}
		return report{"brokers": addresses, "controller": controller}, err
	})
	adminOperation("admin.list_consumer_groups", func(admin sarama.ClusterAdmin) (report, error) {
		groups, err := admin.ListConsumerGroups()
		return report{"groups": groups}, err
	})
	adminOperation("admin.describe_consumer_groups", func(admin sarama.ClusterAdmin) (report, error) {
		groups, err := admin.DescribeConsumerGroups([]string{group})
		described := []map[string]interface{}{}
		for _, g := range groups {
			described = append(described, map[string]interface{}{"group": g.GroupId, "error": int(g.Err), "state": g.State, "protocolType": g.ProtocolType, "members": len(g.Members)})
		}
		return report{"groups": described}, err
	})
	adminOperation("admin.list_consumer_group_offsets", func(admin sarama.ClusterAdmin) (report, error) {
		committed, err := committedOffset(admin)
		return report{"committed": committed}, err
	})
	adminOperation("admin.delete_records", func(admin sarama.ClusterAdmin) (report, error) {
		if err := admin.DeleteRecords(recordsTopic, map[int32]int64{0: deleteBefore}); err != nil {
			return nil, err
		}
		client, err := sarama.NewClient(bootstrap, newConfig())
		if err != nil {
			return nil, err
		}
		defer client.Close()
		logStart, err := client.GetOffset(recordsTopic, 0, sarama.OffsetOldest)
		if err != nil {
			return nil, err
		}
		consumed, err := consumePartition(recordsTopic, sarama.OffsetOldest, 1)
		return report{"logStartOffset": logStart, "first": consumed}, err
	})
	adminOperation("admin.delete_consumer_group", func(admin sarama.ClusterAdmin) (report, error) {
		// sarama 1.22.1's ClusterAdmin has no DeleteConsumerGroup yet: the DeleteGroups request it would send, to the coordinator.
		client, err := sarama.NewClient(bootstrap, newConfig())
		if err != nil {
			return nil, err
		}
		defer client.Close()
		coordinator, err := client.Coordinator(group)
		if err != nil {
			return nil, err
		}
		response, err := coordinator.DeleteGroups(&sarama.DeleteGroupsRequest{Groups: []string{group}})
		if err != nil {
			return nil, err
		}
		codes := map[string]int{}
		for name, code := range response.GroupErrorCodes {
			codes[name] = int(code)
		}
		groups, err := admin.ListConsumerGroups()
		return report{"errors": codes, "groupsAfter": groups}, err
	})
	adminOperation("admin.acls", func(admin sarama.ClusterAdmin) (report, error) {
		// Every ACL call and one after them on a single ClusterAdmin: a Kafka broker without an
		// authorizer answers them and keeps the connection. sarama 1.22.1's ClusterAdmin drops the
		// answers' error codes, so the same requests (v0, as it sends them) also go to the
		// controller directly for their codes.
		filter := sarama.AclFilter{ResourceType: sarama.AclResourceAny, ResourcePatternTypeFilter: sarama.AclPatternAny, Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny}
		creation := sarama.AclCreation{
			Resource: sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: adminTopic, ResoucePatternType: sarama.AclPatternLiteral},
			Acl:      sarama.Acl{Principal: "User:alice", Host: "*", Operation: sarama.AclOperationRead, PermissionType: sarama.AclPermissionAllow},
		}
		listed, err := admin.ListAcls(filter)
		if err != nil {
			return nil, err
		}
		if err := admin.CreateACL(creation.Resource, creation.Acl); err != nil {
			return nil, err
		}
		matched, err := admin.DeleteACL(filter, false)
		if err != nil {
			return nil, err
		}
		if _, err := admin.ListTopics(); err != nil {
			return nil, err
		}
		client, err := sarama.NewClient(bootstrap, newConfig())
		if err != nil {
			return nil, err
		}
		defer client.Close()
		controller, err := client.Controller()
		if err != nil {
			return nil, err
		}
		described, err := controller.DescribeAcls(&sarama.DescribeAclsRequest{AclFilter: filter})
		if err != nil {
			return nil, err
		}
		created, err := controller.CreateAcls(&sarama.CreateAclsRequest{AclCreations: []*sarama.AclCreation{&creation, &creation}})
		if err != nil {
			return nil, err
		}
		deleted, err := controller.DeleteAcls(&sarama.DeleteAclsRequest{Filters: []*sarama.AclFilter{&filter}})
		if err != nil {
			return nil, err
		}
		createCodes := []int{}
		for _, result := range created.AclCreationResponses {
			createCodes = append(createCodes, int(result.Err))
		}
		deleteCodes := []int{}
		for _, result := range deleted.FilterResponses {
			deleteCodes = append(deleteCodes, int(result.Err))
		}
		return report{"listed": len(listed), "matched": len(matched), "describeCode": int(described.Err), "createCodes": createCodes, "deleteCodes": deleteCodes}, nil
	})
	adminOperation("admin.delete_topics", func(admin sarama.ClusterAdmin) (report, error) {
		if err := admin.DeleteTopic(adminTopic); err != nil {
			return nil, err
		}
		topics, err := admin.ListTopics()
		names := []string{}
		for name := range topics {
			names = append(names, name)
		}
		return report{"topics": names}, err
	})
}

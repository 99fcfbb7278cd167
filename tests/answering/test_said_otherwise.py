"""What a sentence says in other words than the question (docs/prose.md): purpose and fame as
reasons, the clause after an anchor that ends its clause, and verbs said by a synonym."""

from __future__ import annotations

import pytest

from rag_lab.answering.align import CUE_WORDS, SYNONYM_CUES, aligned_span
from rag_lab.answering.answer_types import AnswerType, answer_type, typed_values
from rag_lab.answering.prose import content_terms, support_check


def sentence(text: str, title: str) -> dict:
    return {"text": text, "value": text, "kind": "sentence", "title": title, "headings": []}


def result(question: str, text: str, title: str) -> str:
    support = support_check(question, sentence(text, title))
    return "ok" if support.ok else str(support.problem)


@pytest.mark.parametrize(
    ("question", "text", "title", "expected"),
    [
        ("希腊人为什么封锁了隘道？", "希腊人封锁了隘道，以防止敌军从小径迂回。", "温泉关", "ok"),  # purpose: 以防
        ("他为什么每天练习？", "他每天练习，以免比赛时失误。", "符泳", "ok"),
        ("为什么他在大埔有很多粉丝？", "他在大埔有很多粉丝，皆因他是土生土长的大埔人。", "吕志兴", "ok"),
        ("兰比尔因为什么而闻名？", "兰比尔以凶猛的球风而闻名。", "兰比尔", "ok"),  # 以…而闻名: what it is known for
        ("兰比尔因为什么而闻名？", "兰比尔球风凶猛而闻名。", "兰比尔", "answer_type"),  # no 以/因 before 而
    ],
)
def test_reasons_said_as_purpose_or_fame(question: str, text: str, title: str, expected: str) -> None:
    assert result(question, text, title) == expected


def test_cause_words_are_whole_words() -> None:
    assert typed_values(AnswerType.REASON, "影响因素很多，基因也有作用。") == []
    assert [v for *_, v in typed_values(AnswerType.REASON, "因其作品而闻名")] == ["因其"]


def test_known_for_is_one_value() -> None:
    found = [v for *_, v in typed_values(AnswerType.REASON, "她以系列儿童小说而著名。")]
    assert found == ["以系列儿童小说而著名"]


def test_the_clause_after_an_anchor_that_ends_its_clause() -> None:
    text = "从那时起，温泉关的名字就被用来形容，以少数的兵力英勇抵抗更强大的敌人。"
    assert [v for *_, v in aligned_span("温泉关的名字被用来形容什么？", text)] == ["以少数的兵力英勇抵抗更强大的敌人"]
    assert result("温泉关的名字被用来形容什么？", text, "温泉关") == "ok"


@pytest.mark.parametrize(
    ("question", "text"),
    [
        # a name stands at the anchor, not in the next clause
        ("国家图书馆首位副馆长是谁？", "他是国家图书馆首位副馆长，同时是首位代理馆长。"),
        # X是什么 is answered where the sentence's 是 stands (Z是X), not after X
        ("张雨生的第六张国语专辑是什么？", "这是张雨生发行的第六张国语专辑，专辑中的歌曲皆由他创作。"),
    ],
)
def test_no_next_clause_for_names_or_copulas(question: str, text: str) -> None:
    assert aligned_span(question, text) == []


@pytest.mark.parametrize(
    ("question", "text", "title", "expected"),
    [
        ("2007年，西贡商信银行获得了什么奖项？", "在2007年9月11日，该银行荣获2007年越南最佳零售银行奖。", "西贡商信银行", "ok"),
        ("佩内塔擅长什么战术？", "佩内塔攻防平衡，善于稳定的底线相持与网前战术。", "佩内塔", "ok"),
        ("《越南亡国史》讲述了什么内容？", "本书记述了越南近代历史与爱国志士们的抗法活动。", "越南亡国史", "ok"),
        # a bare morpheme is no synonym: 获 alone does not say 获得
        ("2007年，西贡商信银行获得了什么奖项？", "在2007年9月11日，该银行获2007年越南最佳零售银行奖。", "西贡商信银行", "terms"),
        # 造成 is not 引起 said otherwise here: the effect comes first (…造成宫颈破裂，…发生羊水栓塞)
        ("羊水栓塞会引起什么症状？", "使用催生素催生，造成宫颈破裂，产妇较易发生羊水栓塞。", "羊水栓塞", "terms"),
    ],
)
def test_verbs_said_by_a_synonym(question: str, text: str, title: str, expected: str) -> None:
    assert result(question, text, title) == expected


def test_synonyms_are_words_not_morphemes() -> None:
    assert all(len(cue) >= 2 for cues in SYNONYM_CUES.values() for cue in cues)
    assert all(CUE_WORDS[word] == cues for word, cues in SYNONYM_CUES.items())


def test_a_date_range_is_one_value() -> None:
    question = "1996年2月至4月，吴双战担任什么职务？"
    said = "1996年2月至4月担任武警部队副司令员兼参谋长、武警部队党委委员。"
    other = "1993年4月至1996年2月担任武警部队参谋长、武警部队党委委员。"  # the same numbers, another time
    assert result(question, said, "吴双战") == "ok"
    assert result(question, other, "吴双战") == "terms"


def test_question_word_leftovers() -> None:
    assert answer_type("琴娜·杜普洛因什么而著名？")[0] == AnswerType.REASON  # 因什么 asks why
    assert content_terms("这个计划由谁来主持？") == ["计划", "主持"]  # 来 links the question word to its verb
    assert content_terms("威拍哇丽兰室路是以什么来命名的？") == ["威拍哇丽兰室路", "命名"]
    assert "来" in content_terms("这种习俗是怎么来的？")  # 来 is the verb here
    # … and how a name came about is how it was named (eleventh pass, terms.NAME_ORIGIN_RE)
    assert content_terms("硬枝黄蝉的名称是怎么来的？") == ["硬枝黄蝉", "得名"]


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("新馆能否进行人工照明？", ["新馆", "人工照明"]),  # 进行 only carries its object
        ("2011年，法院对他做出了什么判决？", ["2011年", "法院"]),  # the head 判决 says the action
        ("学校作出了什么决定？", ["学校"]),
        ("进行曲是什么？", ["进行曲"]),  # a word, not the light verb
        ("研究进行了多久？", ["研究进行"]),  # the main verb: nothing after it but the question word
    ],
)
def test_light_verbs_are_no_terms(question: str, terms: list[str]) -> None:
    assert content_terms(question) == terms


def test_a_sentence_saying_the_action_without_the_light_verb_passes() -> None:
    assert result("2008年，欧盟做出了什么批准？", "2008年，欧盟批准新馆作为展览场地。", "新馆") == "ok"
    assert result("新馆能否进行人工照明？", "新馆目前尚未安装人工照明设备。", "新馆") == "ok"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("读者在一年内借满一百本书，称为阅读之星（Reading Star）。", "ok"),  # the description, then its name
        ("这些读者，被称为阅读之星。", "ok"),
        ("他们，称为阅读之星。", "answer_type"),  # too little before the cue to describe anything
        ("读者在一年内借满一百本书，称为阅读之星奖励计划。", "answer_type"),  # a longer name, not the term
    ],
)
def test_a_term_named_after_its_description_is_defined(text: str, expected: str) -> None:
    assert result("什么是阅读之星？", text, "图书馆") == expected

"""The one documented support check for prose answers (answering/prose.py)."""

from __future__ import annotations

import pytest

from rag_lab.answering.answer_types import AnswerType, answer_type, typed_values
from rag_lab.answering.prose import content_terms, support_check


def sentence(text: str, title: str = "文档", headings: tuple[str, ...] = ()) -> dict:
    return {"text": text, "value": text, "kind": "sentence", "title": title, "headings": list(headings)}


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("新馆什么时候开放？", AnswerType.DATE),
        ("学校哪一年更名？", AnswerType.DATE),
        ("新馆几点开馆？", AnswerType.DATE),
        ("新馆有多少个座位？", AnswerType.NUMBER),
        ("共有几个校区？", AnswerType.NUMBER),
        ("首任校长是谁？", AnswerType.NAME),
        ("服务中心在哪里？", AnswerType.PLACE),
        ("研讨间怎么预约？", AnswerType.NONE),
    ],
)
def test_answer_type_from_the_question_word(question: str, kind: AnswerType) -> None:
    assert answer_type(question)[0] == kind


def test_content_terms_drop_question_and_stop_words() -> None:
    assert content_terms("新馆的停车场有多少个车位？") == ["新馆", "停车场", "车位"]
    assert content_terms("报告厅A共有多少个座位？") == ["报告厅a共", "座位"]


def test_typed_values() -> None:
    assert [v for _, _, v in typed_values(AnswerType.NUMBER, "共有120个座位，三百余名学生，面积2万")] == [
        "120个", "三百余名", "2万",
    ]  # fmt: skip
    assert [v for _, _, v in typed_values(AnswerType.DATE, "于2023年10月8日开放，上午九点半开门")] == [
        "2023年10月8日", "上午九点半",
    ]  # fmt: skip
    assert [v for _, _, v in typed_values(AnswerType.NAME, "馆长是张伟教授")] == ["张伟"]
    assert [v for _, _, v in typed_values(AnswerType.PLACE, "中心位于行政楼一楼东侧。")] == ["行政楼一楼东侧"]
    assert typed_values(AnswerType.NUMBER, "编号120的房间") == []  # a number without its unit


def test_passes_when_terms_are_covered_and_the_type_is_present() -> None:
    support = support_check("新馆有多少个座位？", sentence("新馆共有120个座位。"))
    assert support.ok and support.problem is None
    assert [v for _, _, v in support.values] == ["120个"]


def test_fails_naming_the_missing_type() -> None:
    support = support_check("新馆什么时候开放？", sentence("新馆将在秋季之后开放，欢迎读者。"))
    assert not support.ok and support.problem == "answer_type"
    assert support.covered == ("新馆", "开放")


def test_fails_when_a_content_term_is_not_mentioned() -> None:
    support = support_check("新馆的停车场有多少个车位？", sentence("新馆共有120个座位。"))
    assert not support.ok and support.problem == "terms" and "停车场" in support.missing


def test_title_and_headings_cover_terms_but_the_sentence_must_say_the_rest() -> None:
    unit = sentence("它于1952年创办。", title="东湖师范专科学校")
    assert support_check("东湖师范专科学校是哪一年创办的？", unit).ok
    other = sentence("学校共有两个校区。", title="东湖师范专科学校")
    assert support_check("东湖师范专科学校是哪一年创办的？", other).problem == "terms"


def test_a_value_already_in_the_question_is_not_an_answer() -> None:
    assert (
        support_check("2001年学校合并了吗，在哪一年？", sentence("2001年学校合并。")).problem == "answer_type"
    )


def test_numbers_in_the_question_must_occur() -> None:
    assert support_check("3号楼在哪里？", sentence("4号楼位于北门东侧。")).problem == "terms"


def test_untyped_questions_need_something_new_in_the_sentence() -> None:
    assert support_check("研讨间怎么预约？", sentence("研讨间需要提前一天在网上预约。")).ok
    assert support_check("研讨间怎么预约？", sentence("研讨间预约。")).problem == "answer_type"


def test_a_question_of_only_stop_words_cannot_be_checked() -> None:
    assert support_check("是什么？", sentence("一切都好。")).problem == "no_terms"


def test_definition_questions_need_a_defining_sentence() -> None:
    assert answer_type("什么是乙酰胺？")[0] == AnswerType.DEFINITION
    assert answer_type("乙酰胺的用途是什么？")[0] == AnswerType.NONE  # an attribute, not a definition
    unit = sentence("乙酰胺（学名：acetamide），是由乙酸衍生出的酰胺。")
    assert support_check("什么是乙酰胺？", unit).ok
    assert support_check("什么是乙酰胺？", sentence("乙酰胺的衍生物是一种溶剂。")).problem == "answer_type"


def test_reason_questions_need_a_cause_word() -> None:
    assert support_check("为什么畜牧业发达？", sentence("日照长，因此畜牧业发达。")).ok
    assert support_check("为什么畜牧业发达？", sentence("当地畜牧业发达。")).problem == "answer_type"


def test_the_word_after_an_interrogative_names_the_answers_kind_not_a_term() -> None:
    from rag_lab.answering.prose import answer_heads

    assert answer_heads("他在馆里担任过哪些职务？") == ["职务"]
    assert content_terms("他在馆里担任过哪些职务？") == ["馆里担任"]  # 他 refers back: no term
    # 在哪些 is a determiner, not 在哪 (a place word) leaving 些 behind
    assert content_terms("这种鸟分布在哪些地区？") == ["种鸟分布"]
    # a type word that starts with a determiner stays one word (哪一年 is not 哪一 + 年回)
    assert answer_heads("他在哪一年回到学校？") == []
    assert content_terms("他在哪一年回到学校？") == ["回", "学校"]
    unit = sentence("张伟曾任图书馆馆长、档案室主任等职。", title="张伟")
    assert support_check("张伟曾任什么职务？", unit).ok
    # without the rule 职务 would be missing although the sentence lists the posts
    assert support_check("张伟曾任什么职务？", sentence("张伟曾任图书馆馆长。", title="张伟")).missing == ()


def test_a_run_is_cut_where_the_title_names_part_of_it() -> None:
    # 王家瑞担任 under the title 王家瑞: 担任 must be in the sentence itself
    title = "王家瑞"
    assert support_check("1973年王家瑞担任什么职务？", sentence("1973年加入中国共产党。", title=title)).missing == (
        "担任",
    )
    assert support_check("1973年王家瑞担任什么职务？", sentence("1973年担任邮局职员。", title=title)).ok


def test_the_best_supported_passing_sentence_answers_rank_breaks_ties() -> None:
    from datetime import date

    from rag_lab.answering.prose import decide_prose

    def unit(n: int, text: str) -> dict:
        return {
            **sentence(text, title="峡谷"), "evidence_id": f"e{n}", "sha256": "s", "source": "a.md",
            "span": [n * 100, n * 100 + len(text)], "parent_span": [0, 1000],
        }  # fmt: skip

    weaker = unit(1, "帕特纳峡谷全长702米。")  # ranked first, passes with 5 of the 6 bigrams
    stronger = unit(2, "帕特纳赫峡谷全长702米，深80米。")
    question = "帕特纳赫峡谷全长多少米？"
    assert support_check(question, weaker).ok and support_check(question, weaker).coverage < 1
    decision = decide_prose(question, [weaker, stronger], [], date(2024, 1, 1))
    assert decision is not None and decision.answer == stronger["text"]


def test_a_month_alone_is_a_date() -> None:
    assert [v for _, _, v in typed_values(AnswerType.DATE, "花期从10月起至翌年5~6月，三月下旬结果")] == [
        "10月", "6月", "三月下旬",
    ]  # fmt: skip
    assert typed_values(AnswerType.DATE, "历时三个月") == []  # a duration, not a month


def test_a_sentence_that_says_nothing_the_question_asks_about_fails() -> None:
    # every term is in the title, so only the sentence's own words can show it is about the question
    unit = sentence("全书共分三卷。", title="王爱爱")
    assert support_check("王爱爱有什么美誉？", unit).problem == "terms"
    assert support_check("王爱爱有什么美誉？", sentence("王爱爱有晋剧皇后之美誉。", title="王爱爱")).ok


@pytest.mark.parametrize(
    ("question", "text", "span"),
    [
        ("耶律乞奴被谁所杀？", "耶律乞奴战败，东渡鸭绿江，被耶律金山所杀。", "耶律金山"),  # both sides anchor
        ("魏绛引退后，谁担任魏氏领袖？", "魏绛引退后，魏舒担任魏氏领袖。", "魏舒"),  # the gap opens its clause
        ("行政权名义上属于谁？", "行政权名义上属于君主，由总督代理执行。", "君主"),  # the gap ends its clause
        ("叶盛茂毕业于哪所大学？", "毕业于国立中兴大学，后任处长。", "国立中兴大学"),  # 哪所 + head 大学
        ("杨瑛得知下落后做了什么？", "杨瑛得知下落后前往天牢救人。", "前往天牢救人"),  # 做 is a pro-verb
    ],
)
def test_aligned_span_is_the_text_where_the_question_word_stands(question: str, text: str, span: str) -> None:
    from rag_lab.answering.prose import aligned_span

    [(start, end, value)] = aligned_span(question, text)
    assert value == span and text[start:end] == span


def test_no_aligned_span_when_an_anchor_is_missing_or_the_gap_says_nothing_new() -> None:
    from rag_lab.answering.prose import aligned_span

    assert aligned_span("耶律乞奴被谁所杀？", "耶律乞奴战败，东渡鸭绿江。") == []  # no 所杀
    assert aligned_span("行政权属于谁？", "行政权属于，由总督代理。") == []  # an empty gap
    assert aligned_span("耶律厮不被谁所杀？", "耶律厮不被其下所杀。") == []  # a pronoun refers, it does not name


def test_an_untyped_question_with_a_question_word_needs_the_aligned_span() -> None:
    unit = sentence("他在生物研究中常被用来抑制蛋白质合成。", title="放线菌酮")
    assert support_check("放线菌酮在生物研究中常被用来做什么？", unit).ok
    # the same words, but nothing stands where 做什么 asks: refused as missing the answer
    other = sentence("放线菌酮常被用来研究，在生物研究中很常见。", title="放线菌酮")
    assert support_check("放线菌酮在生物研究中常被用来做什么？", other).problem == "answer_type"
    # 怎么/如何 questions have no slot to align: two new characters are enough, as before
    assert support_check("研讨间怎么预约？", sentence("研讨间需要提前一天在网上预约。")).ok


def test_an_aligned_span_leaves_off_a_preposition_and_refuses_a_mid_phrase_start() -> None:
    from rag_lab.answering.prose import aligned_span

    assert [v for _, _, v in aligned_span("大果西番莲分布在什么地区？", "大果西番莲分布于热带美洲。")] == ["热带美洲"]
    assert aligned_span("帕特纳赫峡谷有什么？", "从1912年起，帕特纳赫峡谷也开发为旅游胜地。") == []  # 也…
    assert aligned_span("椭球坐标的标度因子是什么？", "为了简化标度因子的计算。") == []  # 的计算 starts inside a phrase


def test_a_calendar_year_is_not_a_quantity() -> None:
    assert [v for _, _, v in typed_values(AnswerType.NUMBER, "从1912年起，长702米，历时30年")] == ["702米", "30年"]


@pytest.mark.parametrize(
    ("question", "text", "span"),
    [
        ("它的启动口令是什么？", "“卡基达(Kaji Dha)”是它的启动口令，加勒特受它影响。", "“卡基达(Kaji Dha)”"),  # Z是X
        ("这种树的叶柄有什么特点？", "其叶柄（petiole）有四到六个腺体。", "有四到六个腺体"),  # an aside is skipped
        ("联盟从事的议题有哪些？", "联盟从事的议题有：法律、水资源、废弃物。", "法律"),  # after the colon
        ("龙胆在秋季开什么颜色的花？", "秋季开蓝紫色花，聚伞花序顶生。", "蓝紫色"),  # a one-character right side
    ],
)
def test_aligned_span_inversion_asides_and_colons(question: str, text: str, span: str) -> None:
    from rag_lab.answering.prose import aligned_span

    [(start, end, value)] = aligned_span(question, text)
    assert value == span and text[start:end] == span


def test_numbers_with_latin_units_and_the_asked_measure() -> None:
    from rag_lab.answering.answer_types import measure

    assert [v for _, _, v in typed_values(AnswerType.NUMBER, "速度为4.7 GHz，面积1750.33km²")] == [
        "4.7 GHz", "1750.33km²",
    ]  # fmt: skip
    assert measure("峡谷有多长？") == "length" and measure("工程用了多长时间？") == "duration"
    assert measure("有多少个座位？") is None
    # 多长 asks for a length: 19世纪 and 30年 are not one
    assert [v for _, _, v in typed_values(AnswerType.NUMBER, "从19世纪起历时30年，全长702米", "length")] == ["702米"]
    assert support_check("峡谷有多长？", sentence("从19世纪到1960年代峡谷上始终有木筏运输。", title="峡谷")).problem == (
        "answer_type"
    )


def test_a_dynasty_answers_which_dynasty() -> None:
    assert answer_type("楚昭辅是哪一朝代的人？")[0] == AnswerType.DATE
    assert support_check("楚昭辅是哪一朝代的人？", sentence("楚昭辅，北宋初年人，官至枢密使。", title="楚昭辅")).ok
    # 宋 of 宋州 is a place, and a year is not a dynasty
    assert not support_check("楚昭辅是哪一朝代的人？", sentence("楚昭辅是宋州人，961年任官。", title="楚昭辅")).ok


def test_a_defined_term_is_a_word_of_its_own() -> None:
    unit = sentence("其衍生物二甲基乙酰胺（DMA）是一种溶剂。", title="乙酰胺")
    assert support_check("什么是乙酰胺？", unit).problem == "answer_type"
    assert support_check("什么是乙酰胺？", sentence("乙酰胺是由乙酸衍生出的酰胺。", title="乙酰胺")).ok


def test_a_name_repeating_the_question_is_no_answer() -> None:
    # 首位代理 stands before the title word 馆长, but it repeats 首位 of the question
    unit = sentence("他是国家图书馆首位副馆长，同时是首位代理馆长。", title="宋建成")
    assert support_check("国家图书馆首位副馆长是谁？", unit).problem == "answer_type"
    assert support_check("国家图书馆首位馆长是谁？", sentence("国家图书馆首位馆长是蒋复璁先生。")).ok


def test_a_question_of_only_its_subject_and_a_kind_word_needs_the_kind_word() -> None:
    title = "王爱爱"
    said = support_check("王爱爱有什么美誉？", sentence("王爱爱祖母为晋剧名旦筱桂花。", title=title))
    assert said.problem == "terms" and said.missing == ("美誉",)
    assert support_check("王爱爱有什么美誉？", sentence("王爱爱有晋剧皇后之美誉。", title=title)).ok


def test_a_typed_value_counts_only_near_what_the_question_asks() -> None:
    # the place stands in a clause two away from 出生 and says nothing about it
    text = "卡洛出生时取名夏尔，是两西西里王子，2008年起为公爵，也是波旁王室族长。"
    assert support_check("夏尔在哪里出生的？", sentence(text, title="卡洛")).problem == "answer_type"
    assert support_check("夏尔在哪里出生的？", sentence("夏尔出生于法国瓦尔省。", title="卡洛")).ok


def test_the_value_at_the_questions_gap_ranks_first_and_one_source_never_conflicts() -> None:
    from datetime import date

    from rag_lab.answering.prose import decide_prose

    def unit(n: int, text: str) -> dict:
        return {
            **sentence(text, title="POWER6"), "evidence_id": f"e{n}", "sha256": "s", "source": "a.md",
            "span": [n * 100, n * 100 + len(text)], "parent_span": [0, 1000],
        }  # fmt: skip

    far = unit(1, "POWER6处理器的速度几乎是其他处理器的3倍。")  # ranked first
    near = unit(2, "POWER6处理器的速度为4.7 GHz。")
    question = "POWER6处理器速度是多少？"
    assert support_check(question, near).at_gap and not support_check(question, far).at_gap
    decision = decide_prose(question, [far, near], [], date(2024, 1, 1))
    assert decision is not None and decision.answer == near["text"]  # not conflicting: one source


def test_values_that_hold_each_other_agree() -> None:
    from rag_lab.answering.prose import _agree

    assert _agree(frozenset({"2007年"}), frozenset({"2007年5月21日"}))
    assert not _agree(frozenset({"120个"}), frozenset({"150个"}))


def test_stop_words_are_matched_word_aware() -> None:
    # 中 of 在比赛中 is a stop word; 中 of 中国 is part of the word
    assert content_terms("他在比赛中获得了什么？") == ["比赛", "获得"]
    assert content_terms("中国第一座水电站在哪里？") == ["中国第一座水电站"]
    assert content_terms("这位将军效力于哪支军队？") == ["位将军效力"]
    # 中国 must be said as a word: 国 of 全国 does not cover it (it did when 中 was dropped)
    unit = sentence("全国共有三座水电站。", title="水电")
    assert support_check("中国有几座水电站？", unit).missing == ("中国",)


def test_a_definition_does_not_refer_back_or_run_past_a_colon() -> None:
    from rag_lab.answering.answer_types import defines

    assert defines("乙酰胺", "检测到了一些有机化合物，乙酰胺即是其一。") == []  # 即是其一 refers back
    assert defines("梧桐树协议", "梧桐树协议确立了两个原则：名单如下：协议被认为是开始。") == []
    assert defines("乙酰胺", "乙酰胺（学名：acetamide），是由乙酸衍生出的酰胺。")  # an aside may hold a colon


def test_an_aligned_span_of_only_a_complement_or_particle_is_none() -> None:
    from rag_lab.answering.prose import aligned_span

    assert aligned_span("楚昭辅收藏了什么名画？", "他统统收藏起来，带宾客观看。") == []  # 起来
    assert aligned_span("拉诺米保持了哪些世界纪录？", "非常接近由她们保持著的世界纪录。") == []  # 著的…
    assert [v for _, _, v in aligned_span("楚昭辅收藏了什么名画？", "他收藏了韩滉《牛图》。")] == ["韩滉《牛图》"]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("赛里木湖被誉为什么？", AnswerType.NONE),  # 誉为 + 什么: what it is called, not why
        ("医院更名为什么？", AnswerType.NONE),
        ("为什么畜牧业发达？", AnswerType.REASON),
        ("这款列车被配属予哪几个铁道？", AnswerType.NONE),  # 哪几: which ones, not how many
        ("共有几个校区？", AnswerType.NUMBER),
        ("歌曲收录在哪张专辑？", AnswerType.NONE),  # 在 + 哪张: which album, not where
        ("龙胆分布在哪些地区？", AnswerType.PLACE),
    ],
)
def test_question_words_inside_other_words(question: str, kind: AnswerType) -> None:
    assert answer_type(question)[0] == kind


def test_more_number_and_time_patterns() -> None:
    assert [v for _, _, v in typed_values(AnswerType.NUMBER, "身高182CM，体长约有24公分，一半以上病人")] == [
        "182CM", "24公分", "一半",
    ]  # fmt: skip
    assert [v for _, _, v in typed_values(AnswerType.DATE, "只在平日早上提供服务")] == ["平日", "早上"]
    assert typed_values(AnswerType.DATE, "新馆将在秋季之后开放") == []  # a season is not a date or time


def test_demonstratives_and_approximations_are_stop_words() -> None:
    assert content_terms("此剧的制作人是谁？") == ["剧", "制作人"]
    assert content_terms("长柄艾纳香的花期约是多久？") == ["长柄艾纳香", "花期"]
    assert content_terms("黄蝉的别称叫什么？") == ["黄蝉", "别称"]
    assert content_terms("条约因此失效的原因？") == ["条约因此失效"]  # words that hold 此/约 stay whole


def test_a_cause_word_opening_the_sentence_points_back() -> None:
    unit = sentence("因此，畜牧业发达；", title="吉斯伯恩")
    assert support_check("为什么吉斯伯恩的畜牧业发达？", unit).problem == "answer_type"
    assert support_check("为什么吉斯伯恩的畜牧业发达？", sentence("日照长，因此畜牧业发达。", title="吉斯伯恩")).ok


def test_a_sentence_announcing_the_answer_is_not_the_answer() -> None:
    unit = sentence("在沧龙类中，浮龙的鳍状肢具有数个独有特征。", title="沧龙")
    assert support_check("浮龙的鳍状肢有哪些特征？", unit).problem == "answer_type"
    assert support_check("浮龙的鳍状肢有哪些特征？", sentence("浮龙的鳍状肢狭窄而扁平。", title="沧龙")).ok


def test_a_value_leans_on_a_neighbouring_clause_only_when_its_own_clause_is_little_more() -> None:
    title = "吴双战"
    # 1974年， opens the sentence: the next clause says what happened then
    assert support_check("吴双战是何时入伍的？", sentence("1974年，吴双战入伍。", title=title)).ok
    # 1965年6月加入中国共产党 is a clause of its own about something else
    text = "1965年6月加入中国共产党，师范专科学校成人教育毕业。"
    assert support_check("吴双战在师范专科学校成人教育学习是什么时候？", sentence(text, title=title)).problem == (
        "answer_type"
    )


def _unit(n: int, text: str, title: str = "峡谷", sha: str = "s") -> dict:
    return {
        **sentence(text, title=title), "evidence_id": f"e{n}", "sha256": sha, "source": "a.md",
        "span": [n * 100, n * 100 + len(text)], "parent_span": [0, 1000],
    }  # fmt: skip


def test_two_equally_supported_sentences_that_differ_are_a_tie_and_refused() -> None:
    from datetime import date

    from rag_lab.answering.prose import decide_prose

    question = "第1舰队是何时解散的？"
    first = _unit(1, "第1舰队于1944年2月25日解散。", title="第1舰队")
    second = _unit(2, "第1舰队曾于1922年解散。", title="第1舰队")
    assert support_check(question, first).strength() == support_check(question, second).strength()
    decision = decide_prose(question, [first, second], [], date(2024, 1, 1))
    assert decision is not None and decision.answer is None
    assert decision.reason == "insufficient_evidence" and "equally well" in decision.message
    assert [c["evidence_id"] for c in decision.checks if c.get("tied")] == ["e1", "e2"]
    # the same value said twice is no tie: the first ranked answers, both cited
    again = _unit(3, "1944年2月25日，第1舰队解散。", title="第1舰队")
    agreeing = decide_prose(question, [first, again], [], date(2024, 1, 1))
    assert agreeing is not None and agreeing.answer == first["text"] and len(agreeing.cited) == 2
    # a stronger sentence is preferred, whatever its rank
    stronger = _unit(4, "第1舰队于1944年2月25日在吴港解散。", title="舰队")
    weaker = _unit(5, "舰队曾于1922年解散。", title="舰队")
    assert support_check(question, stronger).coverage > support_check(question, weaker).coverage
    preferred = decide_prose(question, [weaker, stronger], [], date(2024, 1, 1))
    assert preferred is not None and preferred.answer == stronger["text"]


def test_a_name_pattern_is_preferred_to_an_aligned_stand_in() -> None:
    question = "校园卡服务中心在哪里？"
    pattern = support_check(question, _unit(1, "校园卡服务中心位于行政楼一楼东侧。", title="校园卡"))
    stand_in = support_check(question, _unit(2, "可在校园卡服务中心补办。", title="校园卡"))
    assert pattern.ok and stand_in.ok and stand_in.stand_in and not pattern.stand_in
    assert pattern.strength() > stand_in.strength()


@pytest.mark.parametrize(
    ("question", "text", "span"),
    [
        ("凉茶舖又叫什么？", "凉茶舖，又名凉茶店，是售卖凉茶的商店。", "凉茶店"),
        ("内台航路也叫什么？", "内台航路，或称内台航线，是海运航线。", "内台航线"),
        ("龙胆又被称之为什么？", "龙胆为龙胆属的植物，也称为龙胆草。", "龙胆草"),
        ("南宁二中是什么的简称？", "广西壮族自治区南宁市第二中学，简称南宁二中。", "广西壮族自治区南宁市第二中学"),
    ],
)
def test_an_alias_question_aligns_on_the_sentence_s_alias_cue(question: str, text: str, span: str) -> None:
    from rag_lab.answering.align import aligned_span

    assert [s for _, _, s in aligned_span(question, text)] == [span]
    assert aligned_span(question, "凉茶舖是售卖凉茶的商店。") == []  # no alias cue: nothing to align


def test_a_count_carries_the_classifier_asked() -> None:
    from rag_lab.answering.answer_types import counter

    assert counter("研讨间座位有多少个？") == "个" and counter("有几名队员？") == "人名位"
    assert counter("新馆有多少座位？") == "" and counter("全长多少米？") == ""
    title = "新图书馆"
    assert support_check("研讨间座位有多少个？", sentence("其中研讨间座位240个。", title=title)).ok
    wrong_unit = support_check("研讨间座位有多少个？", sentence("研讨间座位每次最长使用三小时。", title=title))
    assert wrong_unit.problem == "answer_type"
    assert support_check("队伍有多少名队员？", sentence("队伍共有队员9人。", title="队伍")).ok  # people: 人名位


def test_a_cue_says_a_question_word_and_anchors_its_span() -> None:
    from rag_lab.answering.align import aligned_span

    alias = sentence("猴面包树（学名：），又名猢狲树、酸瓠树。", title="猴面包树")
    assert support_check("猴面包树的别名是什么？", alias).ok
    assert [s for _, _, s in aligned_span("猴面包树的别名是什么？", alias["text"])] == ["猢狲树"]
    fame = sentence("被誉为晋剧皇后。", title="王爱爱")
    assert support_check("王爱爱有什么美誉？", fame).ok
    assert support_check("王爱爱有什么美誉？", sentence("被选为晋剧团团长。", title="王爱爱")).problem == "terms"
    born = support_check("克伦贝格尔的出生地在哪里？", sentence("雅各布·克伦贝格尔，生于瑞士。", title="克伦贝格尔"))
    assert born.ok and [v for _, _, v in born.values] == ["瑞士"]  # 生于 says 出生 and anchors the place


def test_pronouns_pro_verbs_and_chule_are_no_terms() -> None:
    # 它们/他 refer back to the subject, 做/干 next to a question word stand for the verb asked,
    # 除了 is a preposition: a sentence need not repeat any of them
    assert content_terms("当穿山甲感到威胁时，它们会如何做？") == ["当穿山甲感", "威胁时"]
    assert content_terms("除了喝凉茶，在凉茶店还能做什么？") == ["喝凉茶", "凉茶店"]
    assert content_terms("吉他有几根弦？")[0] == "吉他"  # a word holding 他 stays whole
    assert content_terms("做饭需要什么？") == ["做饭需要"]  # 做 not next to a question word stays
    sentence = {"text": "在凉茶店，人们还会听歌、看电视。", "title": "凉茶", "headings": [], "span": [0, 16],
                "parent_span": [0, 16]}  # fmt: skip
    assert support_check("除了喝凉茶，在凉茶店还能做什么？", sentence).problem == "terms"  # 喝凉茶 unsaid


def test_question_words_leave_no_characters_behind() -> None:
    # 因 before 为什么 belongs to the question word (it asks why), not to the subject
    assert content_terms("兰比尔因为什么而闻名？") == ["兰比尔", "闻名"]
    assert content_terms("他因为失误而闻名？") == ["因", "失误", "闻名"]  # 因 without 什么 after it stays
    # 能否/可否 ask yes or no; 时候 after a date names the kind (like 时间)
    assert content_terms("狭叶艾纳香能否进行人工栽培？") == ["狭叶艾纳香", "人工栽培"]  # 进行: a light verb
    assert content_terms("2006年的时候，店铺遍布了多少个国家？") == ["2006年", "店铺遍布", "国家"]
